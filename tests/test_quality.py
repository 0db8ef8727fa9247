"""The quality plan and its table: recipes load, their commands re-create them, the table marks what beats SIF."""

from __future__ import annotations

import re
import shlex

import pytest

from parabit.config import ConfigError, load_config, parse_overrides
from parabit.paths import output_root, project_path
from parabit.backtranslation.select import resolve_pairs_path
from parabit.quality import QualityPlan, Row, beats, gain_line, gains, quality_markdown, write_table
from parabit.recipes import load_run_config

PLAN = project_path("jobs/configs/quality/plan.yaml")
BILINGUAL_PLAN = project_path("jobs/configs/bilingual/plan.yaml")


@pytest.fixture(scope="module")
def plan() -> QualityPlan:
    return load_config(QualityPlan, PLAN)


@pytest.mark.parametrize("path", [PLAN, BILINGUAL_PLAN], ids=["quality", "bilingual"])
def test_each_recipe_s_command_re_creates_its_config(path):
    plan = load_config(QualityPlan, path)
    for recipe in plan.recipes:
        words = shlex.split(plan.command(recipe))
        assert words[:4] == ["parabit", "train", "--config", plan.recipes[recipe].config]
        sets = parse_overrides([words[i + 1] for i, word in enumerate(words) if word == "--set"])
        assert load_run_config(project_path(words[3]), sets) == plan.recipe_config(recipe), recipe


def test_only_the_pipelines_a_recipe_reads_are_built(plan):
    assert plan.pipelines_read([plan.champion]) == {"quality-bt-es", "quality-rt-es"}
    assert plan.pipelines_read(["bilingual"]) == set()
    assert "phrases_en_es" in plan.pipelines_read(["bilingual-phrases"])


def test_a_stage_of_any_pipeline_can_be_named_as_training_data():
    assert resolve_pairs_path("pipeline:phrases_en_es/pivot") == output_root() / "pipelines/phrases_en_es/pivot/data"
    assert resolve_pairs_path("pipeline:quality-bt-es").name == "pairs.parquet"


def test_the_champion_must_be_one_of_the_recipes(tmp_path):
    text = re.sub(r"(?m)^champion: .*$", "champion: nobody", PLAN.read_text())
    (tmp_path / "plan.yaml").write_text(text)
    with pytest.raises(ConfigError, match="champion 'nobody' is not one of the recipes"):
        load_config(QualityPlan, tmp_path / "plan.yaml")


def test_the_document_is_the_plan_s_to_name_the_library_has_none(plan, tmp_path):
    assert plan.document == "docs/quality.md"  # what `parabit quality` writes in the checkout
    (tmp_path / "plan.yaml").write_text(PLAN.read_text().replace("document: docs/quality.md", ""))
    assert load_config(QualityPlan, tmp_path / "plan.yaml").document is None  # the table is printed and logged only
    assert QualityPlan.model_fields["document"].default is None


def row(label: str, base: float, sick: float) -> Row:
    return Row(label, {**{f"sts{year}": base + (year - 2012) / 100 for year in range(2012, 2017)}, "sick": sick})


def test_the_table_marks_scores_above_sif_and_each_recipe_s_gain():
    sif = row("glove-sif", 0.55, 0.69)
    untrained, trained = row("r, untrained", 0.50, 0.65), row("r", 0.56, 0.68)
    table = quality_markdown([row("glove-mean", 0.43, 0.61), sif], [(untrained, trained)], bar=sif)
    trained_line = next(line for line in table.splitlines() if line.startswith("| r |"))
    assert "**0.560**" in trained_line and "| 0.680 |" in trained_line  # above SIF bold, SICK below it plain
    assert gains([(untrained, trained)]) == {"r": pytest.approx(0.06)}
    assert beats(trained, sif) == {**{f"sts{y}": True for y in range(2012, 2017)}, "sick": False}


def test_writing_the_table_keeps_the_prose_around_it(tmp_path):
    document = tmp_path / "quality.md"
    write_table(document, "| first |")
    document.write_text("# Title\n\nprose before\n\n" + document.read_text().split("\n\n", 1)[1] + "\nprose after\n")
    write_table(document, "| second |")
    text = document.read_text()
    assert "prose before" in text and "prose after" in text and "| second |" in text and "| first |" not in text
    write_table(document, "| bilingual |", "bilingual")  # another plan's table beside it, not over it
    write_table(document, "| third |")
    text = document.read_text()
    assert "| bilingual |" in text and "| third |" in text and "| second |" not in text


def test_a_plan_s_columns_read_their_own_scores_and_its_gains_their_headline():
    from parabit.evaluation.report import EvaluationReport, Score

    plan = load_config(QualityPlan, BILINGUAL_PLAN)
    report = EvaluationReport([*report_of(0.6, 0.7).scores, Score("tatoeba-es", "es-en", "accuracy", 0.9, 1000),
                               Score("tatoeba-es", "en-es", "accuracy", 0.8, 1000)])
    trained = Row.over("b", [report, report], "cmd", plan.columns)
    assert trained.scores["tatoeba-es-en"] == pytest.approx(0.9) and trained.scores["sick-es"] is None
    assert trained.sts_mean == pytest.approx(0.62)  # the STS years are read whatever the columns
    start = Row.of("word-translation", report, "", plan.columns)
    table = quality_markdown([], [(start, trained)], bar=start, columns=plan.columns, seed_row=False)
    lines = table.splitlines()
    assert lines[0].startswith("| encoder | Tatoeba es→en | Tatoeba en→es |") and "Elgohary" not in table
    assert len(lines) == 2 + 2 and lines[-1].startswith("| b | 0.900 ± 0.0000 | 0.800 ± 0.0000 | – |")
    assert plan.headline_column.name == "tatoeba-es-en"  # each recipe's gain is read on retrieval, not English STS
    worse = Row.of("start", EvaluationReport([*report.scores[:-2], Score("tatoeba-es", "es-en", "accuracy", 0.5, 9)]),
                   "", plan.columns)
    assert gain_line(worse, trained, plan.headline_column).startswith("+0.400 on Tatoeba es→en over its init")


def test_the_bar_must_be_one_of_the_baselines(tmp_path):
    (tmp_path / "plan.yaml").write_text(BILINGUAL_PLAN.read_text().replace('bar: "models:/', 'bar: "nothing:/'))
    with pytest.raises(ConfigError, match="bar 'nothing:/parabit-encoder@champion' is not one of the baselines"):
        load_config(QualityPlan, tmp_path / "plan.yaml")

def report_of(base: float, sick: float):
    from parabit.evaluation.report import EvaluationReport, Score

    return EvaluationReport([Score(f"sts{year}", "mean", "pearson", base + (year - 2012) / 100, 100)
                             for year in range(2012, 2017)] + [Score("sick", "test", "pearson", sick, 100)])


def test_a_recipe_over_several_seeds_is_their_mean_and_sd_and_its_gain_is_read_against_that_spread(plan):
    seeds = Row.over("r", [report_of(0.56, 0.68), report_of(0.58, 0.70), report_of(0.57, 0.69)])
    assert seeds.runs == 3 and seeds.scores["sts2012"] == pytest.approx(0.57)
    assert seeds.spread["sts2012"] == pytest.approx(0.01) and seeds.spread["sts_mean"] == pytest.approx(0.01)
    line = next(line for line in quality_markdown([], [(row("u", 0.5, 0.6), seeds)], bar=row("s", 0.6, 0.7))
                .splitlines() if line.startswith("| r |"))
    assert "| 0.570 ± 0.0100 |" in line and "| 3 |" in line
    assert "+0.070" in gain_line(row("u", 0.50, 0.6), seeds) and "more than the spread" in gain_line(
        row("u", 0.50, 0.6), seeds)
    assert "within the spread" in gain_line(row("u", 0.565, 0.6), seeds)

    first, other = plan.recipe_config(plan.champion, plan.seeds[0]), plan.recipe_config(plan.champion, 2)
    assert first == plan.recipe_config(plan.champion)  # the config's own seed keeps its run name (finished runs reused)
    assert (other.seed, other.name) == (2, f"{first.name}-seed2")


TRANSFORMER_PLANS = [project_path("jobs/configs/bilingual/transformer_plan.yaml"),
                     project_path("jobs/configs/bilingual/transformer_english_plan.yaml")]


@pytest.mark.parametrize("path", TRANSFORMER_PLANS, ids=["transformer", "transformer-english"])
def test_the_transformer_plans_commands_re_create_their_configs(path):
    test_each_recipe_s_command_re_creates_its_config(path)


def test_the_english_transformer_row_reads_the_back_translations_and_selects_on_english_dev():
    plan = load_config(QualityPlan, TRANSFORMER_PLANS[1])
    assert plan.pipelines_read(list(plan.recipes)) == {"quality-bt-es"}
    assert {step.config for step in plan.data} == {"jobs/configs/quality/bt_es.yaml"}
    config = plan.recipe_config("jpa-backtranslations")
    assert config.dev == "sts2012-train+sick-train-trial" and not config.data.bilingual
    assert plan.seeds == (1, 2, 3) and plan.bar == "all-minilm-l6-v2"


def log_curve(store: str, experiment: str, name: str, curve: list[tuple[int, float]], untrained: float) -> None:
    """A finished run ``name`` whose dev score was ``untrained`` at step 0 and then each ``(pairs_seen, score)``."""
    from parabit.tracking import RunTracker, tags

    tracker = RunTracker(experiment, name, tags={tags.RUN_NAME: name}, uri=store)
    tracker.start()
    with tracker.closing():
        tracker.log_metrics({"dev_score": untrained}, step=0)
        for epoch, (pairs, score) in enumerate(curve, 1):
            tracker.log_metrics({"dev_score": score, "pairs_seen": pairs}, step=epoch)


def test_the_dev_curve_is_read_from_the_runs_metrics(isolated_mlflow_store):
    from parabit.quality import dev_curve_markdown

    log_curve(isolated_mlflow_store, "curve-test", "curve-run", [(4000, 0.41), (8000, 0.52)], untrained=0.16)
    table = dev_curve_markdown("curve-test", ["curve-run"], uri=isolated_mlflow_store)
    assert table.splitlines()[0] == "| run | 0 | 4,000 | 8,000 |"
    assert table.splitlines()[2] == "| curve-run | 0.160 | 0.410 | 0.520 |"
    with pytest.raises(ValueError, match="no run named 'other'"):
        dev_curve_markdown("curve-test", ["other"], uri=isolated_mlflow_store)


def test_the_transformer_plan_s_dev_curve_shows_each_recipe_s_run_and_its_dev_set(isolated_mlflow_store):
    from parabit.quality import dev_curve_section

    plan = load_config(QualityPlan, TRANSFORMER_PLANS[0])
    names = [plan.recipe_config(recipe).name for recipe in plan.recipes]
    assert names == ["transformer-es", "transformer-es-ranking"]
    log_curve(isolated_mlflow_store, "parabit-transformer", names[0], [(4000, 0.5), (8000, 0.6)], untrained=0.16)
    log_curve(isolated_mlflow_store, "parabit-transformer", names[1], [(4000, 0.7)], untrained=0.16)
    section = dev_curve_section(plan, uri=isolated_mlflow_store)
    assert section.startswith("Dev score (tatoeba-es-dev) against pairs seen")
    assert "| transformer-es | 0.160 | 0.500 | 0.600 |" in section
    assert "| transformer-es-ranking | 0.160 | 0.700 | – |" in section  # a shorter run: its missing slice a dash


def test_the_dev_curve_command_names_what_it_cannot_read(tmp_path, capsys):
    from parabit.cli import run_command

    assert run_command(argv=["quality", "--config", str(tmp_path / "missing.yaml"), "--dev-curve"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("error: ") and "missing.yaml" in error and "\n" not in error
