"""The transformer recipe's prepared data: keyed by what decides its word pieces (a prefix before every sentence
changes the key, and no prefix leaves the key what it was before prefixes existed), no pair of one text twice, and a student's own start as its teacher."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import torch

from parabit.recipes import load_run_config
from parabit.recipes.transformer.config import TransformerDataConfig
from parabit.recipes.transformer.data import (cache_key, load_teacher_vectors, prepare_transformer, transformer_pairs,
                                              without_identical_sides)
from parabit.recipes.transformer.model import TransformerModule

CONFIG = "jobs/configs/bilingual/transformer.yaml"


def test_a_prefix_changes_the_key_and_none_keeps_it():
    plain = load_run_config(CONFIG)
    checkpoint = plain.model.checkpoint_path()
    keys = {prefix: cache_key(load_run_config(CONFIG, {"model.prefix": prefix}), checkpoint)
            for prefix in ("", "query: ")}
    assert keys[""] == cache_key(plain, checkpoint) != keys["query: "]


def test_pairs_whose_two_sides_are_one_text_are_rejected_and_counted():
    dictionary = transformer_pairs(TransformerDataConfig(sources=(), dictionary=True))
    kept = without_identical_sides(dictionary)
    identical = sum(a.strip().casefold() == b.strip().casefold() for a, b in zip(dictionary.text_a, dictionary.text_b))
    assert identical > 1000  # the MUSE dictionary's names and numbers: 'giffen'|'giffen'
    assert kept.rejected["same text on both sides"] == identical
    assert len(kept.text_a) == len(dictionary.text_a) - identical
    assert not any(a.casefold() == b.casefold() for a, b in zip(kept.text_a, kept.text_b))
    assert ("dog", "perro") in set(zip(kept.text_a, kept.text_b))  # a translation stays


def test_a_student_taught_by_its_own_start_begins_at_zero_english_loss(tmp_path):
    config = load_run_config(CONFIG, {"teacher": "start", "data.max_pairs": 40, "data.dictionary": False})
    prepared = prepare_transformer(config, cache_root=tmp_path)
    teacher = load_teacher_vectors(prepared)
    pairs = pq.read_table(prepared.pairs_path).to_pydict()
    assert teacher.shape == (len(set(map(tuple, pairs["ids_a"]))), 384)

    module = TransformerModule.build(config, prepared, sparse=False).eval()
    rows = np.array(pairs["row"])
    width = max(pairs["len_a"])
    ids = torch.tensor([ids[:width] for ids in pairs["ids_a"]])
    with torch.inference_mode():
        english = module.encoder(ids, torch.tensor(pairs["len_a"]))
    np.testing.assert_allclose(english.numpy(), teacher[rows], atol=1e-5)  # the English term starts at zero
    packaged = cache_key(load_run_config(CONFIG, {"data.max_pairs": 40, "data.dictionary": False}),
                         config.model.checkpoint_path())
    assert cache_key(config, config.model.checkpoint_path()) != packaged
