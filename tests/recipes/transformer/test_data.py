"""The transformer recipe's prepared data: keyed by what decides its word pieces (a prefix before every sentence
changes the key, and no prefix leaves the key what it was before prefixes existed), and no pair of one text twice."""

from __future__ import annotations

from parabit.recipes import load_run_config
from parabit.recipes.transformer.config import TransformerDataConfig
from parabit.recipes.transformer.data import cache_key, transformer_pairs, without_identical_sides

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
