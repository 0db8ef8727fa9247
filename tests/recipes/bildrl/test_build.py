"""The dictionary builder on a hand-made WordNet/WOLF/MUSE sample: the join, the held-out split, the stages."""

from __future__ import annotations

from collections import Counter

import pyarrow.compute as pc
import pytest

from parabit.recipes.bildrl.build import (
    Candidate,
    build_dictionaries,
    muse_candidates,
    select_entries,
    wolf_candidates,
)
from parabit.recipes.bildrl.config import DictionaryBuildConfig
from parabit.recipes.bildrl.heldout import in_pool


def test_wolf_join_pairs_french_words_with_their_synsets_english_definition(tiny_inputs):
    joined, unjoined = wolf_candidates(tiny_inputs.wolf, tiny_inputs.synsets)
    by_word = {c.word: c for c in joined}
    assert by_word["chien"].definition == "a domesticated carnivorous mammal"  # the quoted example is not definition
    assert by_word["toutou"].synset_id == by_word["chien"].synset_id == "00000001-n"
    # WOLF writes the satellite adjective 00000003-s as -a: it must still join
    assert by_word["grand"].synset_id == "00000003-s" and by_word["grand"].definition == "above average in size"
    assert [(line, reason) for line, reason, _ in unjoined] == [(8, "synset not in WordNet 3.0")]
    assert len(joined) + len(unjoined) == len(tiny_inputs.wolf) == 12


def test_muse_keeps_english_words_with_exactly_one_synset(tiny_inputs):
    kept, rejected = muse_candidates(tiny_inputs.muse, tiny_inputs.synsets)
    assert {c.word: c.definition for c in kept}["perro"] == "a domesticated carnivorous mammal"
    reasons = {text.split("\t")[0]: reason for _, reason, text in rejected}
    assert reasons == {"banco": "English translation has several synsets", "xyz": "English translation not in WordNet"}


@pytest.mark.parametrize("seed", range(8))
def test_no_test_word_or_test_definition_in_training(seed):
    # Synonyms share a definition: holding out one of them must remove the shared definition from training.
    candidates = [Candidate("s", i, word, definition, f"{i:08d}-n") for i, (word, definition) in enumerate([
        ("chien", "dog def"), ("toutou", "dog def"), ("chien", "hound def"), ("chat", "cat def"),
        ("minou", "cat def"), ("maison", "house def"), ("arbre", "tree def"), ("porte", "door def"),
        ("eau", "water def"), ("eau", "rain def"), ("voiture", "car def")])]
    vocabulary = {c.word for c in candidates}
    kept, rejected = select_entries(candidates, vocabulary, test_words=3, seed=seed)
    test = [(c, w) for c, w, split in kept if split == "test"]
    train = [(c, w) for c, w, split in kept if split == "train"]
    assert len(test) == 3 and len({w for _, w in test}) == 3
    assert not {w for _, w in test} & {w for _, w in train}
    assert not {c.definition for c, _ in test} & {c.definition for c, _ in train}
    assert len(kept) + len(rejected) == len(candidates)


def test_test_words_come_only_from_the_held_out_pool():
    candidates = [Candidate("s", i, f"word{i}", f"definition {i}", f"{i:08d}-n") for i in range(400)]
    vocabulary = {c.word for c in candidates}
    kept, _ = select_entries(candidates, vocabulary, test_words=40, seed=0,
                             may_hold_out=lambda word: in_pool(word, "fr"))
    test = {w for _, w, split in kept if split == "test"}
    assert len(test) == 40 and all(in_pool(w, "fr") for w in test)
    pool = {w for w in vocabulary if in_pool(w, "fr")}
    assert 0.15 < len(pool) / len(vocabulary) < 0.35  # about a quarter of all words, whatever they are
    # The whole pool may be held out, not one word more.
    kept, _ = select_entries(candidates, vocabulary, test_words=len(pool), seed=0,
                             may_hold_out=lambda word: in_pool(word, "fr"))
    assert {w for _, w, split in kept if split == "test"} == pool
    with pytest.raises(ValueError, match="held-out pool"):
        select_entries(candidates, vocabulary, test_words=len(pool) + 1, seed=0,
                       may_hold_out=lambda word: in_pool(word, "fr"))


def test_select_entries_drops_multiword_unknown_and_duplicate_words():
    candidates = [Candidate("s", 1, "chien domestique", "d1", "x"), Candidate("s", 2, "zzz", "d2", "x"),
                  Candidate("s", 3, "Chat", "d3", "x"), Candidate("s", 4, "chat", "d3", "x")] + \
                 [Candidate("s", 10 + i, w, f"d{10 + i}", "x") for i, w in enumerate(["a", "b", "c"])]
    kept, rejected = select_entries(candidates, {"chat", "a", "b", "c"}, test_words=1, seed=0)
    assert Counter(reason for _, reason in rejected)["multi-word entry"] == 1
    assert Counter(reason for _, reason in rejected)["word not in the bilingual space"] == 1
    assert Counter(reason for _, reason in rejected)["duplicate entry"] == 1
    assert "chat" in {w for _, w, _ in kept}  # lower-cased


def test_build_writes_every_stage_once_and_conserves_rows(tiny_inputs, tiny_spaces, tmp_path):
    config = DictionaryBuildConfig(test_words=1, paraphrase_concepts=50, neighbours=3,
                                   paraphrase_split=(0.5, 0.25, 0.25), output_dir=str(tmp_path))
    outputs = build_dictionaries(config, inputs=tiny_inputs, spaces=tiny_spaces)  # real Apertium eng-spa
    translated = outputs["translate-en-es"].read_data()
    assert translated.num_rows == len({s.definition for s in tiny_inputs.synsets})
    assert all(text.strip() for text in translated["definition_es"].to_pylist())
    fr = outputs["dictionary-fr-en"]
    assert fr.rows_in == 12 and fr.rows_in == fr.rows_out + fr.rows_rejected
    assert fr.reject_reasons["synset not in WordNet 3.0"] == 1 and fr.reject_reasons["multi-word entry"] == 1
    for direction in ("fr-en", "en-es", "es-en"):
        table = outputs[f"dictionary-{direction}"].read_data()
        test = table.filter(pc.equal(table["split"], "test"))
        train = table.filter(pc.equal(table["split"], "train"))
        assert test.num_rows == 1
        assert all(in_pool(word, direction.split("-")[0]) for word in test["word"].to_pylist())
        assert not set(test["word"].to_pylist()) & set(train["word"].to_pylist())
        assert not set(test["definition"].to_pylist()) & set(train["definition"].to_pylist())
    en_es = outputs["dictionary-en-es"].read_data()
    assert set(en_es["def_lang"].to_pylist()) == {"es"} and set(en_es["word_lang"].to_pylist()) == {"en"}
    pairs = outputs["paraphrase-en-es"].read_data()
    assert Counter(pairs["label"].to_pylist())[0] == Counter(pairs["label"].to_pylist())[1] > 0
    assert set(pairs["split"].to_pylist()) == {"train", "dev", "test"}
    # a second run finds every stage complete and recomputes nothing
    again = build_dictionaries(config, inputs=tiny_inputs, spaces=tiny_spaces)
    assert {name: stage.seconds for name, stage in again.items()} == \
           {name: stage.seconds for name, stage in outputs.items()}
