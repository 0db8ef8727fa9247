"""The held-out evaluation sets of the bilingual work and the leak tests: no held-out sentence (either side) reaches
the training data or the pipeline outputs of the shipped champion, quality and bilingual configs, while the seed
papers' reproduction configs read exactly as before."""

from __future__ import annotations

import gzip
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from parabit.backtranslation import PipelineConfig
from parabit.backtranslation.config import ingest_settings
from parabit.backtranslation.ingest import ingest
from parabit.backtranslation.stage import DATA, REJECTS
from parabit.config import load_config
from parabit.data.bitext import iter_tatoeba, read_europarl
from parabit.data.errors import Quarantine
from parabit.data.heldout import HELDOUT_REASON, HeldoutSets, normalise
from parabit.paths import data_path, project_path
from parabit.phrases.config import PhrasesConfig
from parabit.quality import QualityPlan
from parabit.recipes import load_run_config
from parabit.recipes.pairs.config import DataConfig
from parabit.recipes.pairs.data import load_text_pairs, prepare_pairs
from parabit.text.tokenize import Tokenizer

QUALITY = "jobs/configs/quality"


@pytest.fixture(scope="module")
def heldout() -> HeldoutSets:
    return HeldoutSets.load()


def leaked(english, foreign, heldout: HeldoutSets, lang: str = "es") -> list[str]:
    """The sentences of the given sides that are held-out sentences (normalised text)."""
    return ([text for text in english if normalise(text) in heldout.texts["en"]]
            + [text for text in foreign if normalise(text) in heldout.texts.get(lang, set())])


# -- the sets -------------------------------------------------------------------------------------------------------
def test_the_tatoeba_sets_are_1000_unambiguous_pairs_each_disjoint_and_from_the_shipped_file(heldout):
    with gzip.open(data_path("bitext", "tatoeba-en-es", "spa.txt.gz"), "rt", encoding="utf-8") as file:
        rows = [line.rstrip("\n").split("\t")[:2] for line in file]
    english = Counter(normalise(en) for en, _ in rows)
    spanish = Counter(normalise(es) for _, es in rows)
    test, dev = heldout.tatoeba_test, heldout.tatoeba_dev
    assert len(test) == len(dev) == 1000
    assert not {p.en for p in test} & {p.en for p in dev}
    for pair in (*test, *dev):  # each query has exactly one right answer in the whole file
        assert english[normalise(pair.en)] == 1 and spanish[normalise(pair.foreign)] == 1, pair
        assert [pair.en, pair.foreign] == [text.strip() for text in rows[pair.line - 1]]
    # Chosen by hash, not the file's order (which runs from short to long sentences).
    assert np.std([p.line for p in test]) > 20_000


def test_newstest2012_is_held_out_whole_and_its_retrieval_pairs_are_unambiguous(heldout):
    every = read_europarl("es", "dev", quarantine=Quarantine())
    assert all(normalise(p.en) in heldout.texts["en"] and normalise(p.foreign) in heldout.texts["es"] for p in every)
    assert 3000 <= len(heldout.newstest2012) <= len(every)
    assert len({normalise(p.foreign) for p in heldout.newstest2012}) == len(heldout.newstest2012)


# -- the readers ----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def slice_with_heldout(tmp_path_factory, heldout):
    """400 real Tatoeba lines, 30 of them held-out pairs (10 test, 10 dev, and 10 that share only their English
    sentence with a test pair), as a manythings file."""
    with gzip.open(data_path("bitext", "tatoeba-en-es", "spa.txt.gz"), "rt", encoding="utf-8") as file:
        sampled = [line for index, line in enumerate(file) if index % 300 == 0]
    # A sampled line may itself share a sentence with a held-out pair (short sentences recur): it counts as held out.
    lines = [line for line in sampled if not heldout.excludes(*line.split("\t")[:2], "es")][:370]
    held = ([f"{p.en}\t{p.foreign}\n" for p in heldout.tatoeba_test[:10]]
            + [f"{p.en}\t{p.foreign}\n" for p in heldout.tatoeba_dev[:10]]
            + [f"  {p.en.upper()} \tOtra traducción {i}.\n" for i, p in enumerate(heldout.tatoeba_test[10:20])])
    path = tmp_path_factory.mktemp("heldout") / "slice.tsv"
    path.write_text("".join(lines[:200] + held + lines[200:]), encoding="utf-8")
    return path, len(lines), len(held)


def test_a_reader_quarantines_held_out_pairs_with_their_reason_and_keeps_the_rest(slice_with_heldout, heldout):
    path, clean, held = slice_with_heldout
    quarantine = Quarantine()
    pairs = list(iter_tatoeba(path, quarantine=quarantine, heldout=heldout))
    assert quarantine.counts == {HELDOUT_REASON: held}  # case and spacing do not hide a held-out sentence
    assert len(pairs) == clean and not leaked([p.en for p in pairs], [p.foreign for p in pairs], heldout)
    # The default reads every line, as before the held-out sets existed (the reproduction's behaviour).
    assert len(list(iter_tatoeba(path, quarantine=Quarantine()))) == clean + held


def test_excluding_needs_a_quarantine(slice_with_heldout, heldout):
    with pytest.raises(ValueError, match="needs a quarantine"):
        next(iter_tatoeba(slice_with_heldout[0], heldout=heldout))


def test_ingest_rejects_held_out_pairs_so_no_pipeline_output_holds_them(slice_with_heldout, heldout, tmp_path):
    path, clean, held = slice_with_heldout
    config = PipelineConfig(sources=[{"format": "tatoeba", "path": str(path), "lang": "es"}], heldout="exclude")
    rows_in = ingest(config.sources, tmp_path / "ingest", heldout=heldout)
    data = pq.read_table(tmp_path / "ingest" / DATA)
    rejects = pq.read_table(tmp_path / "ingest" / REJECTS)
    assert rows_in == data.num_rows + rejects.num_rows == clean + held
    assert Counter(rejects["reason"].to_pylist())[HELDOUT_REASON] == held
    assert not leaked(data["en"].to_pylist(), data["foreign"].to_pylist(), heldout)


def test_prepared_training_ids_hold_no_held_out_sentence(slice_with_heldout, heldout, tmp_path, outputs):
    """The prepared data itself, decoded back from its ids: no held-out sentence on either side."""
    path, clean, held = slice_with_heldout
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    parquet = tmp_path / "pairs.parquet"
    pq.write_table(pa.table({"text_a": [r[0] for r in rows], "text_b": [r[1] for r in rows],
                             "lang_b": ["es"] * len(rows)}), parquet)
    prepared = prepare_pairs(DataConfig(condition="pairs_parquet", path=str(parquet), heldout="exclude"),
                             cache_root=tmp_path / "prepared")
    assert prepared.stats["rejected"][HELDOUT_REASON] == held and prepared.stats["pairs_kept"] == clean
    ids = pq.read_table(prepared.pairs_path).to_pydict()
    decode = lambda row, length: tuple(prepared.vocab.key(i).split(":", 1)[1] for i in row[:length])  # noqa: E731
    trained = {decode(row, n) for side in "ab" for row, n in zip(ids[f"ids_{side}"], ids[f"len_{side}"])}
    tokenizer = Tokenizer()
    held_tokens = {tuple(tokenizer(p.en)) for p in heldout.tatoeba_test + heldout.tatoeba_dev} | {
        tuple(tokenizer(p.foreign)) for p in heldout.tatoeba_test + heldout.tatoeba_dev}
    assert not trained & held_tokens
    kept_without = prepare_pairs(DataConfig(condition="pairs_parquet", path=str(parquet)),
                                 cache_root=tmp_path / "prepared")
    assert kept_without.stats["pairs_kept"] == clean + held  # the check above could have failed


# -- the shipped configs --------------------------------------------------------------------------------------------
def test_every_quality_champion_and_bilingual_config_excludes_the_held_out_sets():
    plan = load_config(QualityPlan, project_path(f"{QUALITY}/plan.yaml"))
    for recipe in plan.recipes:
        assert plan.recipe_config(recipe).data.heldout == "exclude", recipe
    for step in plan.data:  # every pipeline whose outputs a quality recipe trains on
        config_class = PipelineConfig if step.pipeline == "backtranslate" else PhrasesConfig
        assert load_config(config_class, project_path(step.config)).heldout == "exclude", step.config
    assert load_run_config(project_path("jobs/configs/bilingual/bilingual.yaml")).data.heldout == "exclude"


def test_the_shipped_training_bitext_holds_no_held_out_sentence(heldout):
    """Every bitext source the shipped champion, quality and bilingual configs read, read as they read it."""
    plan = load_config(QualityPlan, project_path(f"{QUALITY}/plan.yaml"))
    sources = {}
    for recipe in plan.recipes:
        data = plan.recipe_config(recipe).data
        for source in data.all_sources:
            if source.condition == "bilingual_sentences":
                sources[(source.lang, source.sources)] = data.heldout
    bilingual = load_run_config(project_path("jobs/configs/bilingual/bilingual.yaml")).data
    sources[(bilingual.lang, bilingual.sources)] = bilingual.heldout
    for (lang, names), setting in sources.items():
        pairs = load_text_pairs(DataConfig(condition="bilingual_sentences", lang=lang, sources=names,
                                           heldout=setting))
        assert pairs.rejected.get(HELDOUT_REASON, 0) > 0, (lang, names)
        assert not leaked(pairs.text_a, pairs.text_b, heldout, lang), (lang, names)


@pytest.mark.parametrize("path", [f"{QUALITY}/bt_es.yaml", f"{QUALITY}/rt_es.yaml"])
def test_the_shipped_pipelines_ingest_no_held_out_sentence(path, heldout, tmp_path):
    """What the quality pipelines back-translate (and so every pair they output) is what their ingest passes on."""
    config = load_config(PipelineConfig, project_path(path))
    ingest(config.sources, tmp_path / "ingest", heldout=heldout if config.heldout == "exclude" else None)
    data = pq.read_table(tmp_path / "ingest" / DATA, columns=["en", "foreign"])
    assert data.num_rows > 100_000
    assert not leaked(data["en"].to_pylist(), data["foreign"].to_pylist(), heldout)


def test_the_reproduction_configs_read_as_before():
    """The seed papers' pipelines and training configs keep the default (``keep``), and their ingest stages keep
    their fingerprints: a running reproduction's stages and ledger digests stay valid."""
    from parabit.papers.records import settings

    for path in ("jobs/configs/wieting/backtranslate_apertium.yaml", "jobs/configs/phrases_en_es_unpruned.yaml"):
        config_class = PhrasesConfig if "phrases" in path else PipelineConfig
        config = load_config(config_class, project_path(path))
        assert config.heldout == "keep" and ingest_settings(config) is config.sources, path
        assert "heldout" not in settings(config), path
    for path in ("jobs/configs/wieting/train_avg.yaml", "jobs/configs/bilingual_sentences.yaml"):
        config = load_run_config(project_path(path))
        assert config.data.heldout == "keep" and "heldout" not in settings(config).get("data", {}), path
