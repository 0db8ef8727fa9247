"""On the shipped data: no held-out BilDRL word is among the pairs that fit a target space's map. An aligned en-es
space is built from 20,000 real sentence pairs, then the es-en dictionary (MUSE words defined by WordNet glosses)
from it; every test word, and every word of the held-out pool, is absent from the Procrustes pairs."""

from __future__ import annotations

import pyarrow.compute as pc
import pytest

from parabit.recipes.bildrl.aligned_space import ALIGNMENT, AlignedSpaceConfig, build_aligned_space
from parabit.recipes.bildrl.build import build_dictionaries
from parabit.recipes.bildrl.config import DictionaryBuildConfig
from parabit.recipes.bildrl.heldout import in_pool


@pytest.mark.slow
def test_no_held_out_word_fits_the_map(tmp_path):
    folder = tmp_path / "space-en-es"
    space = build_aligned_space(AlignedSpaceConfig(lang="es", max_pairs=20_000), folder)
    pairs = [line.split("\t") for line in (folder / ALIGNMENT).read_text().splitlines()]
    assert len(pairs) > 500  # the map still has plenty to fit
    assert not any(in_pool(f, "es") or in_pool(e, "en") for f, e in pairs)

    config = DictionaryBuildConfig(spaces={"es": str(folder)}, test_words=100, output_dir=str(tmp_path / "data"))
    stage = build_dictionaries(config, spaces={"es": space}, directions=("es-en",), paraphrase=False)["dictionary-es-en"]
    table = stage.read_data()
    test_words = set(table.filter(pc.equal(table["split"], "test"))["word"].to_pylist())
    assert len(test_words) == 100 and all(in_pool(w, "es") for w in test_words)
    fitted = {f for f, _ in pairs} | {e for _, e in pairs}
    assert not test_words & fitted
