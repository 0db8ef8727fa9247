"""Ledger records name code that can be checked out: a reproduction that writes the checkout's ledger refuses a
working tree whose tracked files differ from its commit (one line naming them), records anyway with --allow-dirty,
and the document flags such records."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from parabit.papers.cells import Cell, Results
from parabit.paths import data_root, project_root
from parabit.reproduction.document import cells_table

from ..papers.test_tables import result

# Run in a clone of the checkout's commit, with that clone's code (PYTHONPATH wins over the editable install).
PROVENANCE = """
import sys
from parabit.config import ConfigError, load_config
from parabit.reproduction.config import ReproduceConfig
from parabit.reproduction.reproduce import Reproduction
for allow in (False, True):
    config = load_config(ReproduceConfig, "jobs/configs/reproduction.yaml", {
        "papers": ["bao"], "ledger": "docs/reproduction", "document": "docs/reproduction.md", "allow_dirty": allow})
    try:
        provenance = Reproduction(config, {}).provenance()
        print(f"recorded {provenance.commit} {provenance.dirty} [{','.join(provenance.changed)}]")
    except ConfigError as err:
        print("refused", err)
"""


@pytest.fixture
def clone(tmp_path):
    folder = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(project_root()), str(folder)], check=True)
    return folder


def _provenance(clone) -> list[str]:
    env = {**os.environ, "PYTHONPATH": f"{clone / 'platform'}{os.pathsep}{clone}", "PARABIT_DATA": str(data_root())}
    done = subprocess.run([sys.executable, "-c", PROVENANCE], cwd=clone, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()


def test_a_changed_tree_is_refused_naming_the_files_unless_allowed_and_the_ledger_itself_never_counts(clone):
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True).stdout.strip()
    # Writing the ledger and the document is what a reproduction does: they leave the tree clean.
    with open(clone / "docs" / "reproduction" / "bao.jsonl", "a") as ledger:
        ledger.write("\n")
    (clone / "docs" / "reproduction.md").write_text("rewritten")
    assert _provenance(clone) == [f"recorded {commit} False []"] * 2
    (clone / "README.md").write_text("changed")
    refused, recorded = _provenance(clone)
    assert refused.startswith("refused the working tree has uncommitted changes (README.md)") and "--allow-dirty" in refused
    assert recorded == f"recorded {commit} True [README.md]"


def test_the_document_flags_a_record_made_from_a_changed_tree():
    clean, dirty = result("biph", 1, {"m": 0.5}), result("biph", 2, {"m": 0.6})
    object.__setattr__(dirty.record, "dirty", True)

    class Plan:  # what cells_table reads of a plan: the metrics its findings and tables read
        key = "elgohary"

        def findings(self):
            return []

        def tables(self):
            return []

    planned = [Cell("elgohary", "biph", seed, SimpleNamespace(name=f"repro-elgohary-biph-s{seed}")) for seed in (1, 2)]
    rows = cells_table(Plan(), Results([clean, dirty]), planned, {}, {}).splitlines()[2:]
    assert "(uncommitted changes)" not in rows[0] and "c (uncommitted changes)" in rows[1]
