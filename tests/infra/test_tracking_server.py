"""The tracking server a team shares: `infra/local/start.sh --tracking postgres --auth` (a real PostgreSQL server of the
Debian package as MLflow's store, MLflow's basic-auth app, artifacts proxied by the server) under a local Ray cluster
of one head node with 3 CPUs (what a job needs of several nodes is tests/infra/test_local_cluster.py's: a raylet fewer
to start is a fault less on a loaded machine). Strangers are refused and write nothing; a training job (`ray job
submit` through infra/submit.sh) and a sweep of 2 concurrent trials log to it while PostgreSQL is stopped during an
epoch and started again, and afterwards the database itself (SQL on MLflow's tables) holds every run, metric step
and registered version exactly once; a read-only user reads but cannot write; `stop.sh` stops both servers and a
second start reuses the data; a backup taken while a job logs, restored into an emptied state dir, brings back the
runs, models and logins.
One cluster for the module; the tests run in file order, each reading what the ones before it left."""

from __future__ import annotations

import dataclasses
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import psycopg
import pytest
import yaml
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from parabit.paths import PROJECT_ROOT
from parabit.tracking import RunTracker
from parabit.tracking.access import TrackingAccessDenied
from parabit.tracking.registry import check_model_uri, pinned_model_uri

from ..cluster_support import BIN
from .local_cluster import LOCAL, Cluster, listening, running_cluster, still_running

EDITOR, READER = "alice", "bob"
TRAIN_JOB, SWEEP = "team-train", "team-sweep"
TRAIN_MODEL, SWEEP_MODEL = "parabit-encoder-team", "parabit-encoder-team-sweep"
SMALL = ["--set", "model.dim=32", "--set", "evaluation.sts_years=[2016]", "--set", "evaluation.sick=false",
         "--set", "evaluation.msrp=false", "--set", "scaling.cpus_per_worker=0.45"]
# Two epochs of 20,000 pairs: each epoch lasts long enough (~5-10 s) for PostgreSQL to be stopped inside the first
# and started again inside the second.
TRAIN = ("python", "jobs/train.py", "--config", "jobs/configs/bilingual_sentences.yaml", "--set", f"name={TRAIN_JOB}",
         "--set", "data.max_pairs=20000", "--set", "optim.epochs=2", "--set", "tracking.experiment=team",
         "--set", f"tracking.register_as={TRAIN_MODEL}", *SMALL)
# What the training run's worker logs when its first call fails (parabit.tracking.outage).
UNAVAILABLE = re.compile(r"MLflow tracking store http://127\.0\.0\.1:\d+ unavailable")


def _process_of(line: str) -> str:
    """The Ray process a job's log line came from (``(RayTrainWorker pid=…)``), or the job's driver."""
    found = re.search(r"\((\w+) pid=(\d+)\)", line)
    return f"{found[1]} {found[2]}" if found else "driver"


@dataclasses.dataclass
class SharedServer:
    cluster: Cluster
    passwords: dict[str, str]

    @property
    def uri(self) -> str:
        return self.cluster.mlflow

    @property
    def postgres_port(self) -> int:
        return int(self.cluster.env["PARABIT_PORT_BASE"]) + 4  # infra/local/lib.sh

    def login(self, user: str | None, password: str | None = None) -> dict[str, str]:
        """The cluster's environment with MLflow's credential variables for ``user`` (its own password unless
        another is given; none at all for None)."""
        env = {k: v for k, v in self.cluster.env.items() if not k.startswith("MLFLOW_TRACKING_")}
        if user is not None:
            env |= {"MLFLOW_TRACKING_USERNAME": user, "MLFLOW_TRACKING_PASSWORD": password or self.passwords[user]}
        return env

    def as_user(self, user: str) -> Cluster:
        return dataclasses.replace(self.cluster, env=self.login(user))

    def client(self, user: str | None, password: str | None = None) -> MlflowClient:
        """An MLflow client logged in as ``user`` (MLflow reads the variables when a request is made: set them)."""
        for name in ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"):
            os.environ.pop(name, None)
        os.environ.update({k: v for k, v in self.login(user, password).items() if k.startswith("MLFLOW_TRACKING_")})
        return MlflowClient(self.uri, registry_uri=self.uri)

    def sql(self, query: str, *params) -> list[tuple]:
        """``query`` on MLflow's own database, as the database user MLflow connects as."""
        with psycopg.connect(host="127.0.0.1", port=self.postgres_port, user="mlflow", dbname="mlflow",
                             passfile=str(self.cluster.state / "pgpass"), connect_timeout=10) as connection:
            return connection.execute(query, params).fetchall()

    def counts(self) -> dict[str, int]:
        tables = ("runs", "experiments", "metrics", "registered_models", "model_versions",
                  "registered_model_aliases")
        (row,) = self.sql("SELECT " + ", ".join(f"(SELECT count(*) FROM {table})" for table in tables))
        return dict(zip(tables, row))

    def runs_named(self, name: str) -> list[tuple[str, str]]:
        """(run id, status) of every run whose ``parabit.run_name`` tag is ``name``."""
        return self.sql("SELECT r.run_uuid, r.status FROM runs r JOIN tags t ON t.run_uuid = r.run_uuid "
                        "WHERE t.key = 'parabit.run_name' AND t.value = %s", name)

    def steps(self, run_id: str, key: str) -> list[int]:
        return [step for (step,) in self.sql("SELECT step FROM metrics WHERE run_uuid = %s AND key = %s "
                                             "ORDER BY step", run_id, key)]

    def repeated_steps(self, run_ids: list[str]) -> list[tuple]:
        """Every (run, metric, step) logged more than once among ``run_ids``."""
        return self.sql("SELECT run_uuid, key, step, count(*) FROM metrics WHERE run_uuid = ANY(%s) "
                        "GROUP BY run_uuid, key, step HAVING count(*) > 1", run_ids)


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tracking-server")
    # PostgreSQL runs as an unprivileged user (as root: the package's `postgres`), who must reach its data dir under
    # the cluster's state: pytest's temp dir is private (0700), so the state lives in a folder of /tmp that every
    # user may pass through (0711), removed at the end (its logs kept in pytest's temp dir).
    root = Path(tempfile.mkdtemp(prefix="pbpg-", dir="/tmp"))
    root.chmod(0o711)
    passwords = {"admin": secrets.token_hex(12), EDITOR: secrets.token_hex(12), READER: secrets.token_hex(12)}
    for user, password in passwords.items():
        (tmp / f"{user}.password").write_text(password + "\n")
    try:
        with running_cluster(root / "cluster", tmp / "outputs", 0, "--tracking", "postgres", "--auth",
                             "--admin-password-file", str(tmp / "admin.password"), PARABIT_HEAD_CPUS="3") as cluster:
            server = SharedServer(cluster, passwords)
            for user, access in ((EDITOR, "edit"), (READER, "read")):
                made = cluster.run(LOCAL / "tracking-user.sh", user, access, "--password-file",
                                   tmp / f"{user}.password", "--admin-password-file", tmp / "admin.password",
                                   timeout=300)
                assert made.returncode == 0, made.stdout + made.stderr[-3000:]
                assert made.stdout.startswith(f"user '{user}' created on {cluster.mlflow}: role ")
            yield server
    finally:
        for name in ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"):
            os.environ.pop(name, None)
        shutil.copytree(root / "cluster" / "logs", tmp / "logs", dirs_exist_ok=True)
        if (root / "cluster" / "postgres" / "postgres.log").exists():
            shutil.copy(root / "cluster" / "postgres" / "postgres.log", tmp / "logs")
        shutil.rmtree(root, ignore_errors=True)


def _group(pgid: int) -> set[int]:
    listing = subprocess.run(["ps", "-eo", "pid=,pgid="], capture_output=True, text=True, check=True).stdout
    return {int(pid) for pid, group in (line.split() for line in listing.splitlines()) if int(group) == pgid}


@pytest.mark.slow
def test_the_servers_listen_on_loopback_only(shared):
    """PostgreSQL and MLflow, read from the kernel's socket tables: TCP on 127.0.0.1 only, and PostgreSQL has no
    Unix socket either."""
    state = shared.cluster.state
    postmaster = int((state / "postgres.pid").read_text())
    assert listening({postmaster}) == {f"127.0.0.1:{shared.postgres_port}"}
    mlflow = listening(_group(int((state / "mlflow.pid").read_text())))
    assert mlflow == {f"127.0.0.1:{shared.uri.rsplit(':', 1)[1]}"}
    sockets = [line.split()[-1] for line in Path("/proc/net/unix").read_text().splitlines()[1:]]
    assert not [path for path in sockets if path.endswith(f".s.PGSQL.{shared.postgres_port}")]


@pytest.mark.slow
def test_a_stranger_and_a_wrong_password_are_refused_and_write_nothing(shared):
    """No login, and a wrong password: `parabit train` and a job submitted to the cluster stop at once with one line
    naming the server and the variable to set, exit 2; MLflow's own client is refused; no row is added anywhere."""
    before = shared.counts()
    no_login = (f"error: the MLflow server {shared.uri} asks for a login and none is set: set "
                "MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD to a user of that server")
    wrong = (f"error: the MLflow server {shared.uri} refused the login of user '{EDITOR}' (HTTP 401): check "
             "MLFLOW_TRACKING_PASSWORD (and MLFLOW_TRACKING_USERNAME)")
    for env, said in ((shared.login(None), no_login), (shared.login(EDITOR, "not-the-password"), wrong)):
        done = subprocess.run([str(BIN / "parabit"), "train", *TRAIN[2:]], capture_output=True, text=True,
                              env={**env, "MLFLOW_TRACKING_URI": shared.uri}, timeout=300, cwd=PROJECT_ROOT)
        assert done.returncode == 2 and done.stderr.strip().splitlines() == [said], done.stderr[-3000:]
    stranger = dataclasses.replace(shared.cluster, env=shared.login(None))
    stranger.submit_no_wait("stranger", *TRAIN)
    assert stranger.wait_for_end("stranger", timeout=300) == "FAILED"
    assert stranger.job_logs("stranger").strip().splitlines()[-1] == no_login
    for client in (shared.client(None), shared.client(EDITOR, "not-the-password")):
        with pytest.raises(MlflowException) as refused:
            client.create_experiment("stranger")
        assert refused.value.error_code == "UNAUTHENTICATED"
    assert shared.counts() == before


# Over 120 s (its duration not measured yet: infra/README.md §6): two jobs at once on a 3-CPU head sharing two cores
# (a two-epoch training run and a sweep of two one-epoch trials, each a Ray Train run with ~20 s of start-up), plus
# the final evaluation and registration of each.
@pytest.mark.slow
def test_a_job_and_a_sweep_log_everything_once_through_a_database_restart(shared, tmp_path):
    """The editor submits a training job and a 2-trial sweep at once (concurrent writers); PostgreSQL is stopped once
    the job's untrained scores are in the database, and started again once the job says that tracking is unavailable
    (its first epoch could not be logged). Both jobs succeed; in the database each run, each metric step and each
    registered version is there once, each process of the job says once that tracking was unavailable, the sweep's best
    version is @candidate and `parabit promote` makes it @champion; each run names its dataset and its source."""
    editor = shared.as_user(EDITOR)
    space = {"name": SWEEP, "base_config": "jobs/configs/bilingual_sentences.yaml",
             "fixed": {"data.max_pairs": 2000, "model.dim": 32, "optim.epochs": 1, "evaluation.sts_years": [2016],
                       "evaluation.sick": False, "evaluation.msrp": False, "scaling.cpus_per_worker": 0.45,
                       "tracking.experiment": SWEEP, "tracking.register_as": SWEEP_MODEL},
             "search": {"algorithm": "grid", "max_concurrent_trials": 2}, "scheduler": {"name": "fifo"},
             "parameters": {"optim.lr": [0.005, 0.01]}}
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    editor.submit_no_wait(TRAIN_JOB, *TRAIN)
    editor.submit_no_wait(SWEEP, "python", "tuning/sweep.py", "--space", tmp_path / "space.yaml")

    deadline = time.time() + 600
    while not ((runs := shared.runs_named(TRAIN_JOB)) and 0 in shared.steps(runs[0][0], "dev_score")):
        assert editor.job(TRAIN_JOB)["status"] in ("PENDING", "RUNNING"), editor.job_logs(TRAIN_JOB)[-5000:]
        assert time.time() < deadline, "the training job's untrained scores never reached the database"
        time.sleep(0.5)
    editor.stop_part("postgres")
    try:
        deadline = time.time() + 600
        while not UNAVAILABLE.search(logs := editor.job_logs(TRAIN_JOB)):
            assert editor.job(TRAIN_JOB)["status"] in ("PENDING", "RUNNING"), logs[-5000:]
            assert time.time() < deadline, "the job never found the tracking store unavailable"
            time.sleep(0.5)
    finally:
        editor.start_part("postgres")
    for job in (TRAIN_JOB, SWEEP):
        assert editor.wait_for_end(job, timeout=900) == "SUCCEEDED", editor.job_logs(job)[-5000:]

    logs = editor.job_logs(TRAIN_JOB)
    # Once per process: the worker finds the outage first; the driver, reading the run back after the fused step's
    # few seconds of training, may meet the server still reconnecting to its database and says so once too.
    said = Counter(_process_of(line) for line in logs.splitlines() if UNAVAILABLE.search(line))
    assert said and set(said.values()) == {1}, logs[-5000:]
    (model_uri,) = re.findall(rf"model: (models:/{TRAIN_MODEL}/\d+)", logs)
    ((run_id, status),) = shared.runs_named(TRAIN_JOB)
    assert status == "FINISHED"
    assert shared.steps(run_id, "loss") == [1, 2] and shared.steps(run_id, "dev_score") == [0, 1, 2]
    assert shared.sql("SELECT run_id FROM model_versions WHERE name = %s", TRAIN_MODEL) == [(run_id,)]
    assert model_uri == f"models:/{TRAIN_MODEL}/1"

    sweep = shared.sql("SELECT r.run_uuid, r.status, k.value FROM runs r JOIN tags s ON s.run_uuid = r.run_uuid "
                       "JOIN tags k ON k.run_uuid = r.run_uuid WHERE s.key = 'parabit.sweep' AND s.value = %s "
                       "AND k.key = 'parabit.kind'", SWEEP)
    assert sorted(kind for _, _, kind in sweep) == ["sweep", "trial", "trial"], sweep
    assert {status for _, status, _ in sweep} == {"FINISHED"}
    (parent,) = [run for run, _, kind in sweep if kind == "sweep"]
    trials = [run for run, _, kind in sweep if kind == "trial"]
    assert all(shared.steps(trial, "loss") == [1] for trial in trials)
    assert shared.repeated_steps([run_id, *[run for run, _, _ in sweep]]) == []
    assert shared.sql("SELECT version, run_id FROM model_versions WHERE name = %s", SWEEP_MODEL) == [(1, parent)]
    assert shared.sql("SELECT alias, version FROM registered_model_aliases WHERE name = %s",
                      SWEEP_MODEL) == [("candidate", 1)]

    # Lineage, as on SQLite: every trained run names its dataset (both trials the same one, declared at once) and
    # its source; the aliases resolve, and promote moves @champion.
    client = shared.client(EDITOR)
    for run in (run_id, *trials):
        tags = client.get_run(run).data.tags
        assert len(tags["mlflow.source.git.commit"]) == 40 and tags["parabit.command"] and tags["parabit.data"]
        (dataset,) = client.get_run(run).inputs.dataset_inputs
        assert dataset.dataset.name and dataset.dataset.digest
    assert len({client.get_run(trial).inputs.dataset_inputs[0].dataset.digest for trial in trials}) == 1
    assert pinned_model_uri(check_model_uri(f"models:/{SWEEP_MODEL}@candidate", shared.uri),
                            shared.uri) == f"models:/{SWEEP_MODEL}/1"
    promoted = subprocess.run([str(BIN / "parabit"), "promote", "--name", SWEEP_MODEL], capture_output=True,
                              text=True, env={**shared.login(EDITOR), "MLFLOW_TRACKING_URI": shared.uri}, timeout=300)
    assert promoted.returncode == 0, promoted.stderr[-3000:]
    assert promoted.stdout.strip().splitlines()[-1].startswith(f"models:/{SWEEP_MODEL}@champion -> version 1 ")
    assert client.get_model_version_by_alias(SWEEP_MODEL, "champion").run_id == parent


@pytest.mark.slow
def test_a_read_only_user_reads_runs_but_cannot_create_a_run_or_register_a_model(shared):
    """The reader sees the team's runs, metrics and versions; creating a run (through MLflow's client and through
    parabit's tracker, which says so in one line), an experiment, a registered model or a version, or moving an
    alias, is refused (403), and no row is added."""
    before = shared.counts()
    reader = shared.client(READER)
    # The search the results ledger makes for a finished cell (parabit.reproduction.cells): a tag, a status, newest first.
    (run,) = reader.search_runs([reader.get_experiment_by_name("team").experiment_id],
                                f"tags.`parabit.run_name` = '{TRAIN_JOB}' and attributes.status = 'FINISHED'",
                                order_by=["attributes.start_time DESC"], max_results=5)
    assert [m.step for m in reader.get_metric_history(run.info.run_id, "loss")] == [1, 2]
    (version,) = reader.search_model_versions(f"name = '{TRAIN_MODEL}'")
    refused = [lambda: reader.create_run(run.info.experiment_id),
               lambda: reader.log_metric(run.info.run_id, "reader", 1.0),
               lambda: reader.create_experiment("reader-own"),
               lambda: reader.create_registered_model("reader-model"),
               lambda: reader.create_model_version(TRAIN_MODEL, version.source, run_id=run.info.run_id),
               lambda: reader.set_registered_model_alias(TRAIN_MODEL, "champion", version.version)]
    for attempt in refused:
        with pytest.raises(MlflowException) as denied:
            attempt()
        assert denied.value.error_code == "PERMISSION_DENIED"
    with pytest.raises(TrackingAccessDenied, match=rf"^the MLflow server {shared.uri} does not let user 'bob' create "
                                                   r"runs in experiment 'team' \(HTTP 403\): set MLFLOW_TRACKING_USER"):
        RunTracker("team", "reader-run", uri=shared.uri).start()
    promoted = subprocess.run([str(BIN / "parabit"), "promote", "--name", TRAIN_MODEL], capture_output=True, text=True,
                              env={**shared.login(READER), "MLFLOW_TRACKING_URI": shared.uri}, timeout=300)
    assert promoted.returncode == 2 and promoted.stderr.strip().splitlines() == [
        f"error: the MLflow server {shared.uri} does not let user 'bob' make this change (HTTP 403): set "
        "MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD to a user with edit access, or ask the server's admin "
        "for it"], promoted.stderr[-3000:]
    assert shared.counts() == before


@pytest.mark.slow
def test_parabit_replay_lands_a_spool_with_a_login_that_may_write(shared, tmp_path, monkeypatch):
    """What a run saved while its server was unreachable: `parabit replay` with the reader's login is refused in one
    line (the spool kept, nothing written), with the editor's it lands, each metric step once."""
    monkeypatch.setenv("PARABIT_OUTPUT", str(tmp_path))
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    offline = RunTracker("team", "replayed", uri=f"http://127.0.0.1:{shared.postgres_port + 10}", tags={
        "parabit.run_name": "replayed"})  # nothing listens there: the whole run is spooled
    offline.start()
    for step in (1, 2):
        offline.log_metrics({"loss": 1.0 / step}, step=step)
    assert offline.finish() is False
    before = shared.counts()
    replay = [str(BIN / "parabit"), "replay", str(offline.spool_file)]
    refused = subprocess.run(replay, capture_output=True, text=True, timeout=300,
                             env={**shared.login(READER), "MLFLOW_TRACKING_URI": shared.uri})
    assert refused.returncode == 2 and refused.stderr.strip().splitlines() == [
        f"error: the MLflow server {shared.uri} does not let user 'bob' create runs in experiment 'team' (HTTP 403): "
        "set MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD to a user with edit access, or ask the server's "
        "admin for it"], refused.stderr[-3000:]
    assert offline.spool_file.exists() and shared.counts() == before
    landed = subprocess.run(replay, capture_output=True, text=True, timeout=300,
                            env={**shared.login(EDITOR), "MLFLOW_TRACKING_URI": shared.uri})
    assert landed.returncode == 0, landed.stderr[-3000:]
    ((run_id, status),) = shared.runs_named("replayed")
    assert status == "FINISHED" and shared.steps(run_id, "loss") == [1, 2] and not offline.spool_file.exists()


@pytest.mark.slow
def test_stop_stops_both_servers_and_a_second_start_reuses_the_data(shared):
    """stop.sh stops PostgreSQL and MLflow (and Ray); start.sh again, without its tracking flags and without the admin
    password (MLflow made the admin at the first start), serves the same database: every row is still there, the
    editor reads the job's run, and a stranger is still refused."""
    cluster, before = shared.cluster, shared.counts()
    servers = {name: int((cluster.state / f"{name}.pid").read_text()) for name in ("postgres", "mlflow")}
    processes = {pid: args for pid, args in cluster.processes().items()
                 if pid in servers.values() or pid in _group(servers["mlflow"])}
    stopped = cluster.run(LOCAL / "stop.sh", timeout=300)
    assert stopped.returncode == 0, stopped.stderr[-3000:]
    assert not [pid for pid, args in processes.items() if still_running(pid, args)]
    assert not list(cluster.state.glob("*.pid"))
    started = cluster.run(LOCAL / "start.sh", timeout=600)
    assert started.returncode == 0, started.stderr[-4000:]
    assert "(postgres store, login true)" in started.stderr
    assert shared.counts() == before
    ((run_id, _),) = shared.runs_named(TRAIN_JOB)
    assert shared.client(EDITOR).get_run(run_id).info.status == "FINISHED"
    with pytest.raises(MlflowException) as refused:
        shared.client(None).get_run(run_id)
    assert refused.value.error_code == "UNAUTHENTICATED"


@pytest.mark.slow
def test_tracking_user_replaces_any_password_the_admins_included(shared, tmp_path):
    """`tracking-user.sh NAME password` replaces the editor's password (the admin's login) and the admin's own (its
    current password is the login, which MLflow requires of a user changing their own); the old ones are refused,
    the new ones log in, the editor keeps its role; a user who does not exist, and the admin's old password, are one
    line each."""
    new = {user: secrets.token_hex(12) for user in ("admin", EDITOR)}
    for name, password in (("admin.old", shared.passwords["admin"]), ("admin.new", new["admin"]),
                           (f"{EDITOR}.new", new[EDITOR])):
        (tmp_path / name).write_text(password + "\n")

    def tracking_user(user: str, new_file: str, admin_file: str) -> subprocess.CompletedProcess:
        return shared.cluster.run(LOCAL / "tracking-user.sh", user, "password", "--password-file", tmp_path / new_file,
                                  "--admin-password-file", tmp_path / admin_file, timeout=300)

    done = tracking_user(EDITOR, f"{EDITOR}.new", "admin.old")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == f"user '{EDITOR}' on {shared.uri}: password replaced"
    done = tracking_user("admin", "admin.new", "admin.old")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().startswith(f"user 'admin' on {shared.uri}: password replaced (the admin's")
    old = dict(shared.passwords)
    shared.passwords.update(new)  # for the tests after this one
    for user in ("admin", EDITOR):
        with pytest.raises(MlflowException) as refused:
            shared.client(user, old[user]).search_experiments()
        assert refused.value.error_code == "UNAUTHENTICATED"
        shared.client(user).search_experiments()
    stale = tracking_user(EDITOR, f"{EDITOR}.new", "admin.old")
    assert stale.returncode == 1 and stale.stderr.strip().splitlines()[-1] == (
        "tracking_user.py: the server refused the login of its admin 'admin': check the admin password "
        "(--admin-password-file or MLFLOW_AUTH_ADMIN_PASSWORD)")
    missing = tracking_user("nobody", f"{EDITOR}.new", "admin.new")
    assert missing.returncode == 1 and len(missing.stderr.strip().splitlines()) == 1, missing.stderr
    assert missing.stderr.startswith("tracking_user.py: ") and "nobody" in missing.stderr
    role = shared.cluster.run(LOCAL / "tracking-user.sh", EDITOR, "edit", "--password-file", tmp_path / f"{EDITOR}.new",
                              "--admin-password-file", tmp_path / "admin.new", timeout=300)
    assert role.returncode == 0 and "role editor" in role.stdout, role.stderr[-3000:]  # the same role, kept

class _Logger(threading.Thread):
    """A job logging to the server until told to stop: runs one after another, each with a metric history, then an
    artifact, then a tag naming it and a model version whose source is that artifact's folder (so each row the
    database gets after the upload names a file that existed before the row did)."""

    def __init__(self, client: MlflowClient, experiment_id: str, model: str):
        super().__init__(daemon=True)
        self.client, self.experiment_id, self.model = client, experiment_id, model
        self.created: list[tuple[str, float]] = []  # (run id, time.monotonic() once created)
        self.finished: list[str] = []
        self.stop, self.error = threading.Event(), None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                run = self.client.create_run(self.experiment_id, tags={"backup.kind": "logger"})
                run_id = run.info.run_id
                self.created.append((run_id, time.monotonic()))
                for step in range(3):
                    self.client.log_metric(run_id, "loss", 1.0 / (step + 1), step=step)
                self.client.log_text(run_id, run_id, "out/id.txt")
                self.client.set_tag(run_id, "backup.artifact", "out/id.txt")
                self.client.create_model_version(self.model, f"{run.info.artifact_uri}/out", run_id=run_id)
                self.client.set_terminated(run_id)
                self.finished.append(run_id)
        except Exception as err:  # noqa: BLE001 - reported by the test
            self.error = err

    def wait_for(self, finished: int, timeout: float = 300) -> None:
        deadline = time.time() + timeout
        while len(self.finished) < finished:
            assert self.error is None and self.is_alive(), f"the logging job failed: {self.error!r}"
            assert time.time() < deadline, f"the logging job finished {len(self.finished)} run(s) in {timeout} s"
            time.sleep(0.2)


# Last in the file: it stops the cluster, wipes its state and starts it again from the backup.
@pytest.mark.slow
def test_a_backup_taken_while_a_job_logs_restores_into_an_empty_state_dir(shared, tmp_path):
    """Runs (metric histories, an artifact), a registered model with versions and an alias, and the logins are in the
    server; `backup.sh` runs while a job logs runs, artifacts and model versions; the cluster is stopped, its state
    dir removed, `restore.sh` fills a new one and `start.sh` (no flags, no admin password) starts it: the same runs,
    histories, artifacts, versions and alias are back, every logins works with its role, every run and version of
    the logging job the backup holds has its artifact, and nothing created after the backup is there."""
    cluster, editor = shared.cluster, shared.client(EDITOR)
    experiment_id = editor.create_experiment("backup")
    known = editor.create_run(experiment_id, run_name="before-the-backup")
    for step in range(5):
        editor.log_metric(known.info.run_id, "loss", 1.0 / (step + 1), step=step)
    editor.log_text(known.info.run_id, "weights", "model/weights.txt")
    editor.set_terminated(known.info.run_id)
    editor.create_registered_model("parabit-backup")
    editor.create_model_version("parabit-backup", f"{known.info.artifact_uri}/model", run_id=known.info.run_id)
    editor.set_registered_model_alias("parabit-backup", "champion", "1")
    editor.create_registered_model("parabit-backup-logger")

    def state() -> dict:
        """What the test compares: every run with its status and metric history; this test's model versions and
        aliases (the other tests of the module register and alias their own models in the same server)."""
        return {"runs": {run: (status, tuple(shared.sql("SELECT step, value FROM metrics WHERE run_uuid = %s "
                                                         "ORDER BY key, step", run)))
                         for run, status in shared.sql("SELECT run_uuid, status FROM runs")},
                "versions": set(shared.sql("SELECT name, version, source, run_id FROM model_versions "
                                           "WHERE name LIKE %s", "parabit-backup%")),
                "aliases": set(shared.sql("SELECT name, alias, version FROM registered_model_aliases "
                                          "WHERE name LIKE %s", "parabit-backup%"))}

    logger = _Logger(editor, experiment_id, "parabit-backup-logger")
    logger.start()
    try:
        logger.wait_for(2)
        backup_started = time.monotonic()
        backed_up = cluster.run(LOCAL / "backup.sh", tmp_path / "backup", timeout=600)
        backup_ended = time.monotonic()
        assert backed_up.returncode == 0, backed_up.stderr[-3000:]
        logger.wait_for(len(logger.finished) + 2)  # the job goes on after the backup
    finally:
        logger.stop.set()
        logger.join(timeout=120)
    assert logger.error is None, repr(logger.error)
    before = state()

    again = cluster.run(LOCAL / "backup.sh", tmp_path / "backup", timeout=60)
    assert again.returncode == 1 and again.stderr.strip().splitlines()[-1] == (
        f"[parabit-cluster] ERROR: the backup folder {tmp_path / 'backup'} exists already: name a new one")
    over = cluster.run(LOCAL / "restore.sh", tmp_path / "backup", timeout=60)
    assert over.returncode == 1 and over.stderr.strip().splitlines()[-1] == (
        f"[parabit-cluster] ERROR: the state dir {cluster.state} is not empty: restore into a new or empty one (stop "
        "its cluster and move it away)")

    stopped = cluster.run(LOCAL / "stop.sh", timeout=300)
    assert stopped.returncode == 0, stopped.stderr[-3000:]
    shutil.copytree(cluster.state / "logs", tmp_path / "logs-before-the-restore")
    shutil.rmtree(cluster.state)
    restored = cluster.run(LOCAL / "restore.sh", tmp_path / "backup", timeout=600)
    assert restored.returncode == 0, restored.stderr[-3000:]
    started = cluster.run(LOCAL / "start.sh", timeout=600)
    assert started.returncode == 0, started.stderr[-4000:]
    assert "(postgres store, login true)" in started.stderr
    after = state()

    # What was there before the job started is back as it was.
    logged = {run for run, _ in logger.created}
    assert {run: v for run, v in after["runs"].items() if run not in logged} == {
        run: v for run, v in before["runs"].items() if run not in logged}
    assert {v for v in after["versions"] if v[0] != "parabit-backup-logger"} == {
        v for v in before["versions"] if v[0] != "parabit-backup-logger"}
    assert after["aliases"] == before["aliases"] == {("parabit-backup", "champion", 1)}
    # The logging job: the runs finished before the backup began are there whole, none created after it ended, and
    # every run or version of the job in the backup is, as far as it got, what the server had (no later rows).
    restored_runs = set(after["runs"]) & logged
    finished_before = set(logger.finished[:2])
    assert finished_before <= restored_runs
    assert not restored_runs & {run for run, created in logger.created if created > backup_ended}
    assert all(after["runs"][run][1] == before["runs"][run][1][:len(after["runs"][run][1])] for run in restored_runs)
    assert {v for v in after["versions"] if v[0] == "parabit-backup-logger"} <= before["versions"]
    assert backup_started < backup_ended

    # The files: the known run's artifact reads back; each logged run the backup tagged as having its artifact, and
    # each version of the job's model, finds its file.
    client = shared.client(EDITOR)
    weights = client.download_artifacts(known.info.run_id, "model/weights.txt", str(tmp_path))
    assert Path(weights).read_text() == "weights"
    tagged = [run for run in restored_runs if "backup.artifact" in client.get_run(run).data.tags]
    assert finished_before <= set(tagged)
    versions = [v for v in after["versions"] if v[0] == "parabit-backup-logger"]
    assert {run for *_, run in versions} <= set(tagged)
    for run in tagged:
        assert [f.path for f in client.list_artifacts(run, "out")] == ["out/id.txt"], run
        folder = tmp_path / "downloaded" / run
        folder.mkdir(parents=True)
        assert Path(client.download_artifacts(run, "out/id.txt", str(folder))).read_text() == run

    # The logins, with their roles: the editor writes (the restored sequences go on), the reader reads only, the
    # admin logs in with the password of the backup, a wrong password is refused.
    new_run = client.create_run(experiment_id)
    client.log_metric(new_run.info.run_id, "loss", 0.5, step=1)
    client.create_model_version("parabit-backup", f"{new_run.info.artifact_uri}/model", run_id=new_run.info.run_id)
    assert client.get_model_version_by_alias("parabit-backup", "champion").run_id == known.info.run_id
    reader = shared.client(READER)
    assert [m.step for m in reader.get_metric_history(known.info.run_id, "loss")] == [0, 1, 2, 3, 4]
    with pytest.raises(MlflowException) as denied:
        reader.create_run(experiment_id)
    assert denied.value.error_code == "PERMISSION_DENIED"
    assert shared.client("admin").get_experiment(experiment_id).name == "backup"
    with pytest.raises(MlflowException) as refused:
        shared.client(EDITOR, "not-the-password").get_run(known.info.run_id)
    assert refused.value.error_code == "UNAUTHENTICATED"
