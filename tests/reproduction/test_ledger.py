"""The results ledger: records written one line each and read back, the newest record of a cell found (or the same
training under another name, or a stale one), and a bad line named."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from parabit.config import ConfigError
from parabit.papers.records import PreparedRecord
from parabit.reproduction.ledger import Ledger

from ..conftest import finished_record as record


def test_records_are_appended_one_line_each_and_read_back(sick_cell, tmp_path):
    ledger = Ledger(tmp_path)
    first = record(sick_cell)
    ledger.append(first)
    ledger.append(PreparedRecord(paper="bao", digest="d1", facts={"sizes": {"main": 3}}, commit="c", seconds=1.5,
                                 machine={"cpus": 2}, finished="2026-11-25T10:00:00Z"))
    newer = record(sick_cell, metrics={"sick-en/test/pearson": 0.76})
    ledger.append(newer)
    lines = (tmp_path / "bao.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line)["paper"] == "bao" for line in lines)

    again = Ledger(tmp_path)
    assert again.cell("bao", sick_cell.name, sick_cell.digest) == newer  # the newest record of the cell wins
    assert again.prepared("bao", "d1").facts == {"sizes": {"main": 3}} and again.prepared("bao", "d2") is None
    assert again.stale("bao", sick_cell.name, sick_cell.digest) is None
    assert again.cell("bao", sick_cell.name, "other digest") is None
    assert again.stale("bao", sick_cell.name, "other digest") == newer  # recorded, but with other settings


def test_a_cell_takes_the_record_of_the_same_training_under_another_name(sick_cell, tmp_path):
    ledger = Ledger(tmp_path)
    tuning_run = replace(record(sick_cell), cell="repro-bao-tuning-point-s1")  # same digest, another cell's name
    ledger.append(tuning_run)
    assert ledger.cell("bao", sick_cell.name, sick_cell.digest) is None
    assert ledger.result("bao", sick_cell.name, sick_cell.digest) == tuning_run
    assert ledger.stale("bao", sick_cell.name, sick_cell.digest) is None
    assert ledger.result("bao", sick_cell.name, "other digest") is None
    own = record(sick_cell)
    ledger.append(own)
    assert ledger.result("bao", sick_cell.name, sick_cell.digest) == own  # its own record first


def test_a_line_that_is_not_a_record_is_one_error_naming_file_and_line(sick_cell, tmp_path):
    Ledger(tmp_path).append(record(sick_cell))
    with open(tmp_path / "bao.jsonl", "a") as file:
        file.write('{"kind": "cell", "cell": "x"\n')
    with pytest.raises(ConfigError, match=r"bao\.jsonl:2: not a ledger record"):
        Ledger(tmp_path).cells("bao")
