"""Registering a model against a remote MLflow server: the package's code as a folder of files against one archive.

    .venv/bin/python bench/bench_registration.py --model MODEL [--model-store URI] [--repeats 3]

Against the server of ``MLFLOW_TRACKING_URI`` with the login of ``MLFLOW_TRACKING_USERNAME``/``_PASSWORD`` (e.g. the
local stack: ``infra/local/start.sh --tracking postgres --auth``, a user from ``tracking-user.sh NAME edit``). MODEL
is the embedder to register, a pyfunc model URI or folder (the main job's: ``make main``, then
``--model models:/parabit-encoder/1 --model-store sqlite:///outputs/mlflow.db``). Each repeat logs and registers it
twice, in turn: with the ``parabit`` package as MLflow's ``code_paths`` folder (how models were logged until
2026-12-07: one upload request per source file) and as the one archive ``parabit.zip`` (how they are now). The files
of each model are counted from the same model saved locally; the seconds are ``log_model`` with its registration.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from unittest import mock

import mlflow

from _common import machine_line, median, table, timed, write_section
from parabit.export import pyfunc

LAYOUTS = {"package folder (before)": lambda folder: pyfunc.PACKAGE_DIR, "one archive (now)": pyfunc.code_archive}


def files_of(embedder, layout) -> int:
    with tempfile.TemporaryDirectory() as scratch, mock.patch.object(pyfunc, "code_archive", layout):
        folder = pyfunc.save_embedder_model(embedder, Path(scratch) / "model")
        return sum(path.is_file() for path in folder.rglob("*"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="the embedder to register (pyfunc model URI or folder)")
    parser.add_argument("--model-store", help="the tracking URI MODEL is read from (default: the server's)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    server = os.environ["MLFLOW_TRACKING_URI"]
    mlflow.set_tracking_uri(args.model_store or server)
    embedder = pyfunc.load_embedder(args.model)
    mlflow.set_tracking_uri(server)
    mlflow.set_experiment("bench-registration")

    seconds = {name: [] for name in LAYOUTS}
    for repeat in range(args.repeats):
        for name, layout in LAYOUTS.items():
            with mlflow.start_run(run_name=f"{name} {repeat + 1}"), mock.patch.object(pyfunc, "code_archive", layout):
                took, _ = timed(lambda: pyfunc.log_embedder(embedder, registered_model_name="bench-registration"))
            seconds[name].append(took)
            print(f"repeat {repeat + 1}, {name}: {took:.1f} s", flush=True)

    rows = [[name, files_of(embedder, layout), f"{median(seconds[name]):.1f}",
             " / ".join(f"{value:.1f}" for value in sorted(seconds[name]))] for name, layout in LAYOUTS.items()]
    before, now = (median(seconds[name]) for name in LAYOUTS)
    write_section("bench_registration", "\n".join([
        "## Registering a model against the tracking server (`bench/bench_registration.py`)", "",
        machine_line() + f" · model `{args.model}` · server {server} with a login.", "",
        table(["the model's code", "files", "median s", "min / … / max s"], rows), "",
        f"Ratio: the archive takes {now / before:.2f}× the folder's time ({args.repeats} repeats each, in turn)."]))


if __name__ == "__main__":
    main()
