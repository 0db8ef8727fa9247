"""`parabit reproduce --quick --repeats 1` end to end, run once for the module: every seed paper's section with its
findings, tables and cells; every cell in the ledger with the numbers its MLflow run logged; a fresh MLflow store
with only the ledger writes the same document byte for byte without training; a changed config makes its cells
stale."""

from __future__ import annotations

import logging
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from parabit.config import load_config
from parabit.paths import project_path
from parabit.reproduction.config import ReproduceConfig
from parabit.paths import local
from parabit.reproduction.ledger import Ledger
from parabit.papers.cells import Results
from parabit.papers.departures import Departure
from parabit.papers.findings import Finding
from parabit.papers.metrics import Metric
from parabit.papers.plan import PaperPlan, PlanContext
from parabit.reproduction.plans import PLANS
from parabit.reproduction.paper_run import PaperRun
from parabit.reproduction.reproduce import Reproduction

from ..cluster_support import BIN, session_ray_env
from ..papers.test_tables import result

PAPERS = ("Bao et al. 2018", "Elgohary & Carpuat 2017", "Wieting, Mallinson & Gimpel 2017", "Chen et al. 2019")
CELL_ROW = re.compile(r"^\| (repro-quick-\S+) \| (\d+) \| ([^|]+?) \| ([-0-9.]+) \| \d+ \| [-0-9]{10} \| [0-9a-f]+"
                      r"(?: \(uncommitted changes\))? \| ([0-9a-f]{32}) \|$", re.M)
CELLS = re.compile(r"^Cells: (\d+) of (\d+) finished\.$", re.M)
COUNTS = re.compile(r"^cells: (\d+) taken from the ledger \((\S+)\), (\d+) from MLflow runs, (\d+) trained, "
                    r"(\d+) failed$", re.M)


def shipped(**overrides) -> ReproduceConfig:
    """The checkout's reproduction config (what `parabit reproduce` reads) with dotted ``overrides``."""
    return load_config(ReproduceConfig, project_path("jobs/configs/reproduction.yaml"), overrides)


def reproduce(env: dict, *args: str) -> str:
    done = subprocess.run([str(BIN / "parabit"), "reproduce", "--quick", "--repeats", "1", *args], env=env,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    # Cells side by side train in Ray tasks: their output is the driver's (no Ray Train line of metrics per epoch).
    assert "Reported metrics" not in done.stdout + done.stderr
    return done.stdout


# Over 120 s (~5-8 min in the full suite on 2 cores): the quick reproduction trains eight cells, the groups of each
# paper's first finding, each a Ray Train run with ~15-20 s of start-up. It runs once for the module: four tests read
# its document and ledger.
@pytest.fixture(scope="module")
def quick(ray_session, isolated_mlflow_store, tmp_path_factory):
    """One quick reproduction of the four papers, two cells at a time: (stdout, document path, ledger folder,
    environment)."""
    outputs = tmp_path_factory.mktemp("quick-reproduction") / "outputs"
    env = session_ray_env(MLFLOW_TRACKING_URI=isolated_mlflow_store, PARABIT_OUTPUT=str(outputs))
    stdout = reproduce(env, "--parallel", "2")
    (document,) = re.findall(r"^document: (\S+)", stdout, re.M)
    return stdout, Path(document), outputs / "reproduction" / "repro-quick" / "ledger", env


@pytest.mark.slow
def test_a_quick_reproduction_writes_every_paper_and_records_every_cell(quick, isolated_mlflow_store, outputs):
    stdout, document, ledger_folder, _ = quick
    text = document.read_text()
    assert text.startswith("# Reproducing the seed papers") and "## Findings at a glance" in text
    sections = [s for s in re.findall(r"^## (.+)$", text, re.M) if s.startswith(PAPERS)]
    assert len(sections) == 4 and [next(p for p in PAPERS if s.startswith(p)) for s in sections] == list(PAPERS)
    glance = text.split("## Findings at a glance", 1)[1].split("\n## ", 1)[0]
    for paper in ("bao", "elgohary", "wieting", "bildrl"):
        assert f"| {paper} |" in glance
    found = text.split("## What this reproduction found", 1)[1].split("\n## ", 1)[0]
    assert len(re.findall(r"^\*\*.+ \d{4}\*\*: \d+ of its \d+ claims hold here", found, re.M)) == 4

    # Every paper trained the groups of one finding; every cell is one ledger line with its MLflow run's numbers.
    counts = [tuple(map(int, c)) for c in CELLS.findall(text)]
    assert len(counts) == 4 and all(finished == planned >= 2 for finished, planned in counts)
    (taken, _, from_mlflow, trained, failed), = [tuple(int(x) if x.isdigit() else x for x in c)
                                                 for c in COUNTS.findall(stdout)]
    assert (taken, from_mlflow, failed) == (0, 0, 0) and trained == sum(p for _, p in counts)
    rows = CELL_ROW.findall(text)
    assert len(rows) == trained
    ledger = Ledger(ledger_folder)
    records = {r.cell: r for paper in PLANS for r in ledger.cells(paper)}
    assert sorted(records) == sorted(name for name, *_ in rows)
    client = MlflowClient(isolated_mlflow_store)
    for name, seed, metric, value, run_id in rows:
        record, run = records[name], client.get_run(run_id)
        assert record.mlflow_run_id == run_id and record.seed == int(seed) == 1 and record.train_seconds > 0
        assert run.info.run_name == name and run.info.status == "FINISHED"
        assert run.data.tags["parabit.reproduction.digest"] == record.digest
        assert record.metrics == {k: v for k, v in run.data.metrics.items() if math.isfinite(v)}  # all it logged
        if "/" in metric:  # one MLflow metric (a label instead: the mean of several, e.g. the STS years)
            assert record.metrics[metric] == pytest.approx(float(value), abs=1e-6), name
        assert record.data and record.machine["cpus"] >= 1 and record.started <= record.finished
    assert sum("/" in metric for _, _, metric, _, _ in rows) >= 4  # Bao's and BilDRL's cells at least

    # A recorded cell's checkpoints are gone (its numbers are in the record); the run record that lets its FINISHED
    # MLflow run stand in for the cell stays. Side by side, each cell trained in a Ray task of the session's cluster,
    # under the cluster's output folder.
    runs = outputs / "ray_results"
    assert not [name for name in records if (runs / name).exists()]
    assert all((runs / f"{name}.parabit.json").is_file() for name in records)

    # `--parallel 2`: each paper's two cells trained side by side, each a Ray task with its own Ray Train run, its
    # workers given half of what the session's 2 CPUs leave beside one for Ray Data. (These are the assertions of the
    # former tests/infra/test_local_cluster.py::test_reproduction_cells_train_side_by_side.)
    for paper in PLANS:  # the stamps are ISO 8601 UTC to the second: their order is the time's
        first, second = sorted(ledger.cells(paper), key=lambda r: r.started)[:2]
        assert second.started < first.finished, paper  # the second started before the first ended
    assert {r.machine["cell_cpus"] for r in records.values()} == {0.5}

    # BilDRL's untrained reference is measured by its data step, in the directions quick mode builds (not en-es).
    assert re.search(r"^\| space mean, untrained \(reference\) \| — \| — \| — (\| [0-9.]+ ){6}\|$", text, re.M)


@pytest.mark.slow
def test_a_fresh_store_with_the_ledger_writes_the_same_document_without_training(quick, tmp_path):
    _, document, ledger_folder, env = quick
    outputs = tmp_path / "outputs"
    shutil.copytree(ledger_folder, outputs / "reproduction" / "repro-quick" / "ledger")
    fresh = {**env, "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'fresh.db'}", "PARABIT_OUTPUT": str(outputs)}
    stdout = reproduce(fresh)
    (taken, _, from_mlflow, trained, failed), = [tuple(int(x) if x.isdigit() else x for x in c)
                                                 for c in COUNTS.findall(stdout)]
    assert (from_mlflow, trained, failed) == (0, 0, 0) and taken == len(CELL_ROW.findall(document.read_text()))
    (again,) = re.findall(r"^document: (\S+)", stdout, re.M)
    assert Path(again) != document and Path(again).read_bytes() == document.read_bytes()
    runs = MlflowClient(fresh["MLFLOW_TRACKING_URI"]).search_runs(
        [e.experiment_id for e in MlflowClient(fresh["MLFLOW_TRACKING_URI"]).search_experiments()],
        "tags.`parabit.kind` = 'training'")
    assert runs == []  # no training run in the fresh store


@pytest.mark.slow
def test_a_changed_config_makes_its_recorded_cells_stale_and_an_unchanged_one_finds_them(quick):
    _, _, ledger_folder, _ = quick
    ledger = Ledger(ledger_folder)
    recorded = {r.cell for r in ledger.cells("bao")}

    def opened(quick_pairs: int = 200) -> PaperRun:
        config = shipped(quick=True, repeats=1, papers=["bao"], ledger=str(ledger_folder),
                         **{"bao.quick_pairs": quick_pairs})
        paper = PaperRun(PLANS["bao"](PlanContext(config)))
        Reproduction(config, {}).open(paper, prepare=False)
        return paper

    same = opened()
    assert {r.cell.name for r in same.results.all} == recorded and same.stale == {}
    changed = opened(quick_pairs=150)  # every quick cell trains on 150 pairs per split instead of 200
    assert changed.results.all == [] and set(changed.stale) == recorded
    assert all("stale" in why for why in changed.stale.values())


@pytest.mark.slow
def test_a_data_step_run_again_keeps_the_facts_its_recorded_cells_were_planned_from(quick, caplog):
    """A restored paper whose missing cells need its data runs the data step again (another machine, say). What the
    record holds stays in force even where this run counts differently (eflomal samples without a seed); what the
    record lacks (a fact added since) comes from this run."""
    _, _, ledger_folder, _ = quick
    config = shipped(quick=True, repeats=1, papers=["elgohary"], ledger=str(ledger_folder))
    reproduction = Reproduction(config, {})
    paper = PaperRun(PLANS["elgohary"](PlanContext(config)))
    reproduction.open(paper, prepare=False)
    assert paper.restored
    recorded = {key: value for key, value in reproduction.ledger.prepared("elgohary", paper.data_digest).facts.items()
                if key != "sweeps"}
    sweeps = {"bilingual_sentences": {"name": "s", "condition": "bilingual_sentences", "reading": "stated", "pinned": {},
                                      "space": "s.yaml", "parent_run_id": None, "best_params": {"k": 1},
                                      "best_dev_score": None, "trials": []}}
    fresh = {**{key: ["counted differently"] for key in recorded}, "sweeps": sweeps}
    with caplog.at_level(logging.WARNING, logger="parabit.reproduction.reproduce"):
        kept = Reproduction._keep_recorded(paper, recorded, fresh)
    assert kept == {**recorded, "sweeps": sweeps}
    plan = paper.plan
    assert plan.data_paths == local(recorded["data_paths"]) and plan.available == recorded["available"]
    assert plan.sweeps == sweeps
    assert "differ from the record's, which stay in force" in caplog.text


@pytest.mark.slow
def test_verify_says_what_it_rebuilds_and_builds_only_its_own_papers_data(quick, tmp_path):
    """`--verify CELL` on a machine with only the ledger: it says first that it rebuilds its own paper's data step for
    the cell's group, builds no other paper's data (Bao's and Elgohary's phrase pipelines stay unbuilt), trains the
    cell again and prints its numbers beside the ledger's."""
    _, _, ledger_folder, env = quick
    (cell,) = [r.cell for r in Ledger(ledger_folder).cells("wieting")][:1]
    outputs = tmp_path / "outputs"
    shutil.copytree(ledger_folder, outputs / "reproduction" / "repro-quick" / "ledger")
    fresh = {**env, "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'fresh.db'}", "PARABIT_OUTPUT": str(outputs)}
    stdout = reproduce(fresh, "--verify", cell)
    lines = stdout.splitlines()
    assert lines[0].startswith(f"{cell}: first the wieting data step, for this cell's group only"), lines[0]
    assert re.search(rf"^{re.escape(cell)}: ledger record of commit [0-9a-f]{{8}}; trained again as "
                     rf"{re.escape(cell)}-verify-\d{{14}}", stdout, re.M), stdout
    assert "dev_score" in stdout
    built = {path.name for path in (outputs / "pipelines").iterdir()} if (outputs / "pipelines").exists() else set()
    assert not any(name.startswith("phrases") for name in built), built


class _PhrasesAgainstSentences(PaperPlan):
    """A plan reduced to what decides its seeds: one headline finding and two measured departures."""

    key, title = "toy", "phrases against sentences"

    def groups(self):
        return []

    def tables(self):
        return []

    def findings(self):
        return [Finding("phrases beat sentences", "phrases", "sentences", Metric.named("sts/mean", "STS mean r"))]

    def departures(self):
        return [Departure("phrase table", "all pairs", "all pairs", "pruned", {"phrases": "phrases-pruned"}),
                Departure("composition", "sum", "sum", "mean", {"phrases": "phrases-mean",
                                                                "sentences": "sentences-mean"})]


def test_a_headline_undecided_under_a_departure_trains_that_departure_s_further_seeds():
    """Pruning moves the phrases by more than the margin (its effect is decided by one seed), but the headline read
    under it is within the margin: the pruned group trains every seed, as an undecided finding's groups do. The
    composition ablation, decided both ways by its first seed, does not."""
    sts = {"phrases": [0.50, 0.51, 0.50], "sentences": [0.40, 0.40, 0.41], "phrases-pruned": [0.43],
           "phrases-mean": [0.30], "sentences-mean": [0.20]}
    paper = PaperRun(_PhrasesAgainstSentences(PlanContext(shipped())))
    paper.results = Results([result(group, seed, {"sts/mean": value}) for group, values in sts.items()
                             for seed, value in enumerate(values, start=1)])
    assert "phrases-pruned" in paper.undecided() and "phrases-pruned" in paper.compared()
    assert not {"phrases-mean", "sentences-mean"} & (paper.undecided() | paper.compared())


class _TwoStepData(_PhrasesAgainstSentences):
    """A plan whose data step has two long steps and records its progress after each (as Elgohary's sweeps and
    their re-scoring do); ``stop_before`` interrupts it there, as a kill or the end of a session would."""

    def __init__(self, context, stop_before: str = ""):
        super().__init__(context)
        self.done: dict[str, int] = {}
        self.ran: list[str] = []
        self.stop_before = stop_before

    def data_fingerprint(self):
        return {"steps": ["first", "second"]}

    def facts(self):
        return {"done": dict(self.done)}

    def restore(self, facts):
        self.done = dict(facts["done"])

    def prepare(self, groups=None):
        for step in ("first", "second"):
            if step not in self.done:
                if step == self.stop_before:
                    raise KeyboardInterrupt
                self.ran.append(step)
                self.done[step] = len(self.done) + 1
                self.context.record_progress(self)


def _open_toy(ledger: Path, prepare: bool = True, stop_before: str = "") -> PaperRun:
    reproduction = Reproduction(shipped(ledger=str(ledger), papers=["bao"]), {})
    context = PlanContext(reproduction.config, progress=reproduction._record_progress)
    paper = PaperRun(_TwoStepData(context, stop_before))
    reproduction.papers = [paper]
    reproduction.open(paper, prepare=prepare)
    return paper


def test_a_data_step_stopped_midway_goes_on_from_its_recorded_progress(ray_session, tmp_path):
    with pytest.raises(KeyboardInterrupt):
        _open_toy(tmp_path, stop_before="second")
    (partial,) = Ledger(tmp_path).records("toy")
    assert partial.partial and partial.facts == {"missing": {}, "done": {"first": 1}}
    # Without preparing (--document-only) the partial facts are what the document is written from.
    assert _open_toy(tmp_path, prepare=False).plan.done == {"first": 1}
    resumed = _open_toy(tmp_path)
    assert resumed.plan.ran == ["second"]  # the first step is not run again
    records = Ledger(tmp_path).records("toy")
    assert [r.partial for r in records] == [True, True, False]
    assert records[-1].facts["done"] == {"first": 1, "second": 2}
    assert _open_toy(tmp_path).plan.ran == []  # complete: nothing runs again
