"""Training on phrase tables and pivot paraphrases, and the SICK-bigram filter of the memorisation check."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from parabit.text.tokenize import Tokenizer
from parabit.recipes.pairs.config import DataConfig
from parabit.recipes.pairs.data import evaluation_bigrams, load_text_pairs, prepare_pairs, shares_bigram


@pytest.fixture
def phrase_files(tmp_path):
    table_dir = tmp_path / "phrase_table"
    table_dir.mkdir()
    pq.write_table(pa.table({"row_id": [1, 2, 3], "en": ["the house", "a man", "is playing"],
                             "foreign": ["la casa", "un hombre", "está tocando"], "count": [3, 2, 2],
                             "lang": ["es"] * 3}), table_dir / "part-00000.parquet")
    pivot = tmp_path / "pivot.parquet"
    pq.write_table(pa.table({"phrase": ["a man", "the house", "is playing"],
                             "paraphrase": ["a guy", "the home", "plays"], "score": [0.5, 0.4, 0.3]}), pivot)
    return table_dir, pivot


def test_phrase_table_folder_trains_as_english_spanish_pairs(phrase_files):
    pairs = load_text_pairs(DataConfig(condition="bilingual_phrases", path=str(phrase_files[0])))
    assert set(pairs.langs_b) == {"es"}
    assert list(zip(pairs.text_a, pairs.text_b))[0] == ("the house", "la casa")


def test_pivot_paraphrases_are_english_pairs(phrase_files):
    pairs = load_text_pairs(DataConfig(condition="pivot_paraphrases", path=str(phrase_files[1])))
    assert set(pairs.langs_b) == {"en"} and pairs.text_b == ["a guy", "the home", "plays"]


def test_missing_columns_and_path_are_named(phrase_files):
    with pytest.raises(ValueError, match="needs data.path"):
        DataConfig(condition="pivot_paraphrases")
    with pytest.raises(ValueError, match="need columns en and foreign"):
        load_text_pairs(DataConfig(condition="bilingual_phrases", path=str(phrase_files[1])))
    with pytest.raises(ValueError, match=r"drop_bigrams_of(.|\n)*Input should be .sick."):
        DataConfig(drop_bigrams_of=("msrp",))


def test_sick_bigrams_are_real_and_filter_pairs(phrase_files, tmp_path):
    bigrams = evaluation_bigrams(("sick",), Tokenizer())
    assert ("a", "man") in bigrams and ("is", "playing") in bigrams and len(bigrams) > 5000
    assert shares_bigram(["yesterday", "a", "man", "left"], bigrams)
    assert not shares_bigram(["la", "casa"], bigrams)
    prepared = prepare_pairs(
        DataConfig(condition="pivot_paraphrases", path=str(phrase_files[1]), drop_bigrams_of=("sick",)),
        cache_root=tmp_path / "prepared")
    # "a man"/"a guy" and "is playing"/"plays" share SICK bigrams; "the house" / "the home" may not
    assert prepared.stats["rejected"]["shares a bigram with sick"] == 3 - prepared.stats["pairs_kept"]
    assert prepared.stats["rejected"]["shares a bigram with sick"] >= 2
