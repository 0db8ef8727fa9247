"""The ``bilingual`` filter of the back-translation pipeline on real pairs: it scores a foreign source against its
English back-translation with a real bilingual model (cosine, or LASER's ratio margin within the batch), so true
translations must score above mismatched ones, the pipeline's selection must reject the low ones with the filter as
the reason, and a wrong batch or configuration must be one clear line.

The model is the bilingual recipe's ``aligned`` start over the GloVe-SIF base (each Spanish word placed at the vectors
of its likeliest English translations under IBM Model 1, fitted on 20,000 Tatoeba pairs that exclude the held-out
sets): a real en–es model built without a Ray Train run. The pairs scored are held-out Tatoeba test pairs and a
Europarl slice, neither of which it was fitted on.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from parabit.backtranslation import PipelineConfig, run_stage
from parabit.backtranslation.config import FilterConfig, ScoreConfig, SelectConfig
from parabit.backtranslation.ingest import row_ids
from parabit.backtranslation.score import HELD_OUT_REASON, score
from parabit.backtranslation.select import rejection_reasons, select
from parabit.backtranslation.stage import DATA, REJECTS, read_parquet_dir
from parabit.config import ConfigError, from_dict
from parabit.data.bitext import read_europarl
from parabit.data.errors import Quarantine
from parabit.data.heldout import HeldoutSets
from parabit.filters import BilingualSimilarityFilter, FilterError, build_filter

from ..bilingual_support import glove_sif_base, small_config, untrained_bilingual

PAIRS = 200
REJECTED = "rejected by filter bilingual"
MINIMUM = 0.4  # a cosine that about 92% of true Tatoeba pairs reach and about 93% of mismatched ones do not


@pytest.fixture(scope="module")
def model(outputs) -> str:
    """A real en–es bilingual model as an embedder folder (see the module docstring)."""
    base = glove_sif_base(outputs / "glove-sif-base")
    config = small_config("bilingual-aligned", base, outputs, model={"foreign_init": "aligned"},
                          data={"max_pairs": 20_000})
    return str(untrained_bilingual(config, outputs / "bilingual-aligned"))


@pytest.fixture(scope="module")
def tatoeba() -> tuple[list[str], list[str]]:
    """(Spanish, English) of the first 200 held-out Tatoeba test pairs."""
    pairs = HeldoutSets.load().tatoeba_test[:PAIRS]
    return [p.foreign for p in pairs], [p.en for p in pairs]


@pytest.fixture(scope="module")
def europarl() -> tuple[list[str], list[str]]:
    """(Spanish, English) of 200 Europarl pairs (lines from about 7,000 on): long sentences on few topics, so even
    unrelated pairs share many words."""
    pairs = read_europarl("es", quarantine=Quarantine(), limit=7200)[-PAIRS:]
    return [p.foreign for p in pairs], [p.en for p in pairs]


def batch(foreign: list[str], english: list[str], lang: str | None = "es") -> dict[str, list]:
    """A filter batch: the foreign source, its English back-translation (also the reference) and the language."""
    columns = {"reference": english, "translation": english, "foreign": foreign}
    return columns if lang is None else {**columns, "lang": [lang] * len(foreign)}


def mismatched(english: list[str]) -> list[str]:
    """Each English sentence moved to the next row: every row pairs a source with another source's translation."""
    return english[1:] + english[:1]


def auc(true: np.ndarray, false: np.ndarray) -> float:
    """The share of (true, mismatched) score pairs in which the true pair scores higher."""
    return float(np.mean(true[:, None] > false[None, :]))


def test_a_true_translation_scores_above_the_same_source_with_another_translation(model, tatoeba):
    """Cosine scores are one float per pair in [-1, 1]; a Spanish source's own English translation scores above
    another source's for at least 95% of 200 held-out Tatoeba sources, and on average by more than 0.5."""
    spanish, english = tatoeba
    cosine = BilingualSimilarityFilter(model=model)
    true, false = cosine.score(batch(spanish, english)), cosine.score(batch(spanish, mismatched(english)))
    assert true.shape == false.shape == (PAIRS,) and true.dtype == np.float64
    assert np.all(np.abs(np.concatenate([true, false])) <= 1 + 1e-6)
    assert np.mean(true > false) >= 0.95
    assert true.mean() - false.mean() > 0.5, (true.mean(), false.mean())


def test_the_margin_is_relative_to_the_batch_and_ranks_true_pairs_first(model, tatoeba):
    """Scored in one batch with as many mismatched pairs, by the ratio margin: at least 97% of (true, mismatched)
    score pairs are ordered right, no mismatched pair stands out from its neighbourhoods (margin below 1) while most
    true ones do. The margin of a pair depends on the batch it is scored in; its cosine does not."""
    spanish, english = tatoeba
    mixed = {name: values + batch(spanish, mismatched(english))[name]
             for name, values in batch(spanish, english).items()}
    margin = BilingualSimilarityFilter(model=model, margin=True, k=4).score(mixed)
    true, false = margin[:PAIRS], margin[PAIRS:]
    assert auc(true, false) >= 0.97
    assert np.mean(false < 1) >= 0.99 and np.mean(true > 1) >= 0.6, (np.mean(false < 1), np.mean(true > 1))

    alone = batch(spanish, english)
    margin_alone = BilingualSimilarityFilter(model=model, margin=True, k=4).score(alone)
    assert not np.allclose(margin_alone, true)
    cosine = BilingualSimilarityFilter(model=model)
    np.testing.assert_allclose(cosine.score(alone), cosine.score(mixed)[:PAIRS], atol=1e-6)


def test_on_europarl_the_margin_ranks_pairs_better_than_the_cosine(model, europarl):
    """Europarl's unrelated sentences share much vocabulary, so their cosine is high too; the margin, which divides by
    how close each side is to its nearest candidates, orders (true, mismatched) pairs right more often than the
    cosine does, and both do better than chance by far."""
    spanish, english = europarl
    mixed = {name: values + batch(spanish, mismatched(english))[name]
             for name, values in batch(spanish, english).items()}
    cosine = BilingualSimilarityFilter(model=model).score(mixed)
    margin = BilingualSimilarityFilter(model=model, margin=True).score(mixed)
    by_cosine, by_margin = auc(cosine[:PAIRS], cosine[PAIRS:]), auc(margin[:PAIRS], margin[PAIRS:])
    assert by_cosine >= 0.8 and by_margin >= by_cosine + 0.02, (by_cosine, by_margin)


def test_the_lang_column_says_how_the_source_is_read(model, tatoeba):
    """With ``lang`` es, or no ``lang`` column (the model then tells the language from the words), the Spanish
    sources score the same; told to read them as English, the model sees mostly unknown words and the true pairs'
    cosine collapses: the column reaches the model."""
    spanish, english = tatoeba
    cosine = BilingualSimilarityFilter(model=model)
    as_spanish = cosine.score(batch(spanish, english))
    np.testing.assert_allclose(cosine.score(batch(spanish, english, lang=None)), as_spanish, atol=1e-6)
    as_english = cosine.score(batch(spanish, english, lang="en"))
    assert as_english.mean() < as_spanish.mean() - 0.4, (as_english.mean(), as_spanish.mean())


def test_selection_rejects_low_scores_with_the_filter_as_the_reason(model, tatoeba):
    """The pipeline's selection with ``minimum`` 0.4: at least 90% of the true pairs pass, at least 90% of the
    mismatched ones are rejected, and each rejected row's reason names the filter."""
    spanish, english = tatoeba
    rows = {name: values + batch(spanish, mismatched(english))[name]
            for name, values in batch(spanish, english).items()}
    table = pa.table({"bilingual": BilingualSimilarityFilter(model=model).score(rows)})
    filters = [FilterConfig(name="bilingual", options={"model": model}, thresholds={"minimum": MINIMUM})]
    reasons = rejection_reasons(table, filters, drop_identical=False)
    assert set(reasons) == {"", REJECTED}
    true, false = reasons[:PAIRS], reasons[PAIRS:]
    assert np.mean(true == "") >= 0.9 and np.mean(false == REJECTED) >= 0.9


@pytest.mark.slow
def test_the_score_and_select_stages_apply_it_on_ray_data(ray_session, model, tatoeba, tmp_path):
    """The back-translation pipeline's score stage (a Ray Data task, which loads the model itself) and select stage on
    400 back-translated rows, half of whose translations belong to another row: every scored row has the
    ``bilingual`` score the filter gives in-process, the selected pairs all reach the minimum, and the rows below it
    are rejects whose reason names the filter: most mismatched rows and few true ones."""
    spanish, english = tatoeba
    foreign, translation = spanish + spanish, english + mismatched(english)
    lines = list(range(1, 2 * PAIRS + 1))
    rows = pa.table({"row_id": row_ids("pairs.tsv", lines), "source": ["pairs.tsv"] * len(lines), "line": lines,
                     "lang": ["es"] * len(lines), "reference": english + english, "foreign": foreign,
                     "translation": translation, "engine": ["test"] * len(lines),
                     "direction": ["es-en"] * len(lines)})

    def translated_rows(workdir: Path) -> int:
        (workdir / DATA).mkdir(parents=True)
        (workdir / REJECTS).mkdir()
        pq.write_table(rows, workdir / DATA / "part-0.parquet")
        return rows.num_rows

    filters = (FilterConfig(name="bilingual", options={"model": model}, thresholds={"minimum": MINIMUM}),)
    translated = run_stage(tmp_path, "backtranslate", "rows", translated_rows)
    scored = run_stage(tmp_path, "score", "score",
                       partial(score, translated, ScoreConfig(filters=filters, holdout_fraction=0.02, batch_size=400)))
    selected = run_stage(tmp_path, "select", "select",
                         partial(select, scored, SelectConfig(sample_size=None, drop_identical=False), filters))

    in_process = dict(zip(rows["row_id"].to_pylist(),
                          BilingualSimilarityFilter(model=model).score(batch(foreign, translation))))
    table = scored.read_data(["row_id", "bilingual"]).to_pydict()
    assert len(table["row_id"]) == scored.rows_out and scored.reject_reasons.keys() <= {HELD_OUT_REASON}
    np.testing.assert_allclose(table["bilingual"], [in_process[i] for i in table["row_id"]], atol=1e-5)

    pairs = pq.read_table(selected.data / "pairs.parquet")
    assert pairs.num_rows >= 0.85 * PAIRS and min(pairs["bilingual"].to_pylist()) >= MINIMUM
    assert set(selected.reject_reasons) == {REJECTED}
    rejected = np.asarray(read_parquet_dir(selected.rejects, ["line"])["line"].to_pylist())
    assert np.sum(rejected > PAIRS) >= 0.85 * PAIRS and np.sum(rejected <= PAIRS) <= 0.1 * PAIRS  # > 200: mismatched


def test_a_batch_without_the_foreign_source_is_one_clear_line(model, tatoeba):
    """The filter reads the foreign column: a batch without it is a FilterError saying so, in one line."""
    spanish, english = tatoeba
    with pytest.raises(FilterError, match="the batch has no 'foreign' column") as err:
        BilingualSimilarityFilter(model=model).score({"reference": english, "translation": english})
    assert "\n" not in str(err.value)


def test_a_source_language_the_model_does_not_read_is_an_error_naming_its_languages(model, tatoeba):
    spanish, english = tatoeba
    with pytest.raises(ValueError, match=r"this model reads \['en', 'es'\], not 'fr'"):
        BilingualSimilarityFilter(model=model).score(batch(spanish[:2], english[:2], lang="fr"))


@pytest.mark.parametrize(("settings", "message"), [
    ({"options": {"k": 0}}, "score.filters[0]: filter 'bilingual': k must be at least 1, got 0"),
    ({"options": {"margins": True}}, "score.filters[0]: filter 'bilingual': bad options {'margins': True}"),
    ({"thresholds": {"min": 0.3}}, "score.filters[0]: filter 'bilingual' has no threshold(s) ['min']; its "
                                   "thresholds are ['maximum', 'minimum']"),
])
def test_a_wrong_filter_setting_is_one_line_naming_the_filter(settings, message):
    """A back-translation config with a wrong ``bilingual`` option or threshold fails when loaded, before any model is
    read, with one line naming the config entry and what is wrong."""
    with pytest.raises(ConfigError) as err:
        from_dict(PipelineConfig, {"score": {"filters": [{"name": "bilingual", **settings}]}}, where="bt.yaml")
    assert str(err.value).startswith(f"bt.yaml: {message}") and "\n" not in str(err.value)


def test_the_filter_is_registered_by_name_with_its_defaults():
    """``build_filter("bilingual")`` builds it without loading anything: cosine scores of the registered champion,
    accepted within [minimum, maximum] (open ends when unset)."""
    built = build_filter("bilingual")
    assert isinstance(built, BilingualSimilarityFilter) and built.columns == ("bilingual",)
    assert (built.model, built.margin, built.k) == ("models:/parabit-encoder-bilingual@champion", False, 4)
    scores = np.array([-0.2, 0.3, 0.9, np.nan])
    assert built.accept(scores, minimum=0.3).tolist() == [False, True, True, False]
    assert built.accept(scores, minimum=0.0, maximum=0.5).tolist() == [False, True, False, False]
    assert built.accept(scores).tolist() == [True, True, True, True]


def test_the_score_stage_records_the_model_version_its_alias_names_so_a_moved_alias_scores_again(
        model, isolated_mlflow_store, tmp_path):
    """The scoring settings (what the score stage's fingerprint is made of) name the version behind ``@champion``, not
    the alias: after the alias moves to another version, a re-run's score stage differs and is redone; a model that
    does not exist is one line before anything runs."""
    from mlflow.tracking import MlflowClient

    from parabit.backtranslation.config import fingerprint

    name = "parabit-encoder-bilingual-pin-check"
    client = MlflowClient(isolated_mlflow_store, registry_uri=isolated_mlflow_store)
    client.create_registered_model(name)
    for _ in range(2):
        client.create_model_version(name, model)
    client.set_registered_model_alias(name, "champion", "1")
    scoring = ScoreConfig(filters=(FilterConfig(name="bilingual", options={"model": f"models:/{name}@champion"}),))
    first = scoring.pinned()
    assert first.filters[0].options["model"] == f"models:/{name}/1"
    client.set_registered_model_alias(name, "champion", "2")
    second = scoring.pinned()
    assert second.filters[0].options["model"] == f"models:/{name}/2"
    assert fingerprint("score", first.scoring_settings()) != fingerprint("score", second.scoring_settings())
    assert ScoreConfig().pinned() == ScoreConfig()  # filters without a model are recorded as configured
    with pytest.raises(ConfigError, match=f"'{name}' has no alias 'gone'"):
        ScoreConfig(filters=(FilterConfig(name="bilingual", options={"model": f"models:/{name}@gone"}),)).pinned()
