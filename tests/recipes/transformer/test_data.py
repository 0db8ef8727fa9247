"""The transformer recipe's prepared data is keyed by what decides its word pieces: a prefix before every sentence
changes the key, and no prefix leaves the key what it was before prefixes existed."""

from __future__ import annotations

from parabit.recipes import load_run_config
from parabit.recipes.transformer.data import cache_key

CONFIG = "jobs/configs/bilingual/transformer.yaml"


def test_a_prefix_changes_the_key_and_none_keeps_it():
    plain = load_run_config(CONFIG)
    checkpoint = plain.model.checkpoint_path()
    keys = {prefix: cache_key(load_run_config(CONFIG, {"model.prefix": prefix}), checkpoint)
            for prefix in ("", "query: ")}
    assert keys[""] == cache_key(plain, checkpoint) != keys["query: "]
