"""The dictionary builder's stages on a hand-made WordNet/WOLF/MUSE sample and on a real slice of MUSE es-en with the
real WordNet: every row kept or rejected once, every sense of a training word kept, the split's copies in training.
Which pairs are kept: tests/recipes/bildrl/test_entries.py."""

from __future__ import annotations

from collections import Counter

import pyarrow.compute as pc

from parabit.recipes.bildrl.build import (BuildInputs, build_dictionaries, overlap_with_training, read_direction,
                                         stage_counts)
from parabit.recipes.bildrl.config import BilDRLConfig, DictionaryBuildConfig
from parabit.recipes.bildrl.heldout import in_pool
from parabit.recipes.bildrl.prepare import training_rows

from .conftest import space_over


def test_the_built_es_en_dictionary_keeps_every_sense_of_a_training_word(outputs, wordnet_synsets, muse_slice,
                                                                        tmp_path):
    # 'trasladado' is the slice's only word of the held-out pool, so it is the test word; the others train.
    spanish = ["banco", "barcos", "existe", "semestres", "trasladado"]
    config = DictionaryBuildConfig(test_words=1, output_dir=str(tmp_path))
    stage = build_dictionaries(config, inputs=BuildInputs(wordnet_synsets, [], muse_slice),
                               spaces={"es": space_over(spanish, "es", 3)}, directions=("es-en",),
                               paraphrase=False)["dictionary-es-en"]
    rows = stage.read_data().to_pylist()
    assert {r["word"] for r in rows if r["split"] == "test"} == {"trasladado"}
    per_word = Counter(r["word"] for r in rows if r["split"] == "train")
    assert per_word == {"banco": 27, "barcos": 12, "existe": 2, "semestres": 2}
    assert overlap_with_training(tmp_path, "es-en")["words"] == 5
    counts = stage_counts(stage)
    assert counts["lines"] == len(muse_slice) == 9 and counts["rejected"]["English translation not in WordNet"] == 1
    assert counts["rows_in"] == counts["rows_out"] + sum(counts["rejected"].values())


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


def test_training_rows_repeat_each_row_as_its_split_puts_it_in_training(tiny_inputs, tiny_spaces, tmp_path):
    for split in ("strict", "authors"):
        config = DictionaryBuildConfig(test_words=1, output_dir=str(tmp_path / split), split=split)
        build_dictionaries(config, inputs=tiny_inputs, spaces=tiny_spaces, directions=("fr-en",), paraphrase=False)
        built = read_direction(tmp_path / split, "fr-en")
        trained = Counter(zip(*(training_rows(BilDRLConfig(data_dir=str(tmp_path / split), space=str(tmp_path)),
                                              "fr-en")[column].to_pylist() for column in ("word", "definition"))))
        expected = Counter()
        for row in built.to_pylist():
            expected[(row["word"], row["definition"])] += row["train_copies"]
        assert trained == +expected
        tested = [(r["word"], r["definition"], r["train_copies"]) for r in built.to_pylist() if r["split"] == "test"]
        assert len(tested) == 1 and (split == "authors" or all(copies == 0 for *_, copies in tested))
        overlap = overlap_with_training(tmp_path / split, "fr-en")
        assert (overlap["rows"], overlap["test"]) == (built.num_rows, 1)
        assert overlap["test_in_training"] == sum(copies > 0 for *_, copies in tested)
        assert overlap["test_word_definitions"] == sum(r["word"] == tested[0][0] for r in built.to_pylist())
        # Capped: a sample of the other words' rows, once each; a test word's rows always, with their copies.
        capped = training_rows(BilDRLConfig(data_dir=str(tmp_path / split), space=str(tmp_path), max_train_rows=2),
                               "fr-en")
        test_words = {word for word, *_ in tested}
        words = capped["word"].to_pylist()
        assert sum(word not in test_words for word in words) == 2
        assert sum(word in test_words for word in words) == sum(
            row["train_copies"] for row in built.to_pylist() if row["word"] in test_words)
