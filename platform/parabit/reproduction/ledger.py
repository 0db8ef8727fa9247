"""The results ledger: every finished reproduction cell as one committed line, so results travel with the code.

A reproduction of many hours outlives one machine and one MLflow store only if its results are in the repository.
Each paper has one line-oriented file, ``<folder>/<paper>.jsonl`` in the folder the reproduction config names
(``parabit reproduce`` passes the checkout's committed ledger folder for a full run), to which the reproduction
appends a record (:mod:`parabit.papers.records`) when a cell finishes and when a paper's data step does. Lines are
JSON (fields in a fixed order): appending never rewrites a line, so two machines' ledgers merge line by line
(:func:`merge_ledgers`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from parabit.config import ConfigError
from parabit.papers.records import CELL, PREPARED, CellRecord, PreparedRecord

SUFFIX = ".jsonl"


@dataclass
class Ledger:
    """The ledger files in ``folder`` (one per paper). Reading is cached; :meth:`append` writes through."""

    folder: Path
    _cache: dict[str, list[CellRecord | PreparedRecord]] = field(default_factory=dict, repr=False)

    def path(self, paper: str) -> Path:
        return self.folder / f"{paper}{SUFFIX}"

    def records(self, paper: str) -> list[CellRecord | PreparedRecord]:
        """Every record of ``paper`` in file order; a line that is not a record fails, naming the file and line."""
        if paper not in self._cache:
            self._cache[paper] = list(_read(self.path(paper)))
        return self._cache[paper]

    def cells(self, paper: str) -> list[CellRecord]:
        return [r for r in self.records(paper) if isinstance(r, CellRecord)]

    def cell(self, paper: str, name: str, cell_digest: str) -> CellRecord | None:
        """The newest record of cell ``name`` with ``cell_digest`` (None: not finished with these settings)."""
        found = [r for r in self.cells(paper) if r.cell == name and r.digest == cell_digest]
        return found[-1] if found else None

    def result(self, paper: str, name: str, cell_digest: str) -> CellRecord | None:
        """The record that finishes cell ``name``: its own (:meth:`cell`), else the newest record of any cell of
        ``paper`` with the same digest: the same training (settings, seed and data) under another name, e.g. a
        tuning step's run at the cells' own scale that a table cell repeats exactly."""
        found = self.cell(paper, name, cell_digest)
        if found is None:
            same = [r for r in self.cells(paper) if r.digest == cell_digest]
            found = same[-1] if same else None
        return found

    def stale(self, paper: str, name: str, cell_digest: str) -> CellRecord | None:
        """The newest record of cell ``name`` made with other settings, when none has ``cell_digest``."""
        if self.result(paper, name, cell_digest) is not None:
            return None
        found = [r for r in self.cells(paper) if r.cell == name]
        return found[-1] if found else None

    def prepared(self, paper: str, data_digest: str) -> PreparedRecord | None:
        """The newest prepared record of ``paper`` with ``data_digest`` (its facts are the ones in force)."""
        found = self.preparations(paper, data_digest)
        return found[-1] if found else None

    def preparations(self, paper: str, data_digest: str) -> list[PreparedRecord]:
        """Every prepared record of ``paper`` with ``data_digest``, oldest first (a data step resumed by several
        runs records each run's part)."""
        return [r for r in self.records(paper) if isinstance(r, PreparedRecord) and r.digest == data_digest]

    def append(self, record: CellRecord | PreparedRecord) -> None:
        """Append one line (flushed to disk before returning: a killed run keeps every record it wrote)."""
        path = self.path(record.paper)
        path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(asdict(record), separators=(", ", ": "), ensure_ascii=False)
        with open(path, "a", encoding="utf-8") as file:
            file.write(line + "\n")
            file.flush()
            os.fsync(file.fileno())
        self.records(record.paper).append(record)


def merge_ledgers(target: Path, source: Path) -> dict[str, int]:
    """Append to the ledger in ``target`` every record of the ledger in ``source`` it lacks (another machine's, or a
    worktree's), paper by paper, in the source's order; returns how many lines each paper gained. Both are read
    first, so a line that is not a record stops the merge before anything is written."""
    theirs = {path.stem: list(_read(path)) for path in sorted(Path(source).glob(f"*{SUFFIX}"))}
    ours = Ledger(Path(target))
    added = {}
    for paper, records in theirs.items():
        known = {json.dumps(asdict(record), sort_keys=True) for record in ours.records(paper)}
        new = [record for record in records if json.dumps(asdict(record), sort_keys=True) not in known]
        for record in new:
            ours.append(record)
        added[paper] = len(new)
    return added


def _read(path: Path) -> Iterable[CellRecord | PreparedRecord]:
    if not path.is_file():
        return
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                kind = data.get("kind")
                if kind == CELL:
                    yield CellRecord(**data)
                elif kind == PREPARED:
                    yield PreparedRecord(**data)
                else:
                    raise ValueError(f"unknown record kind {kind!r}")
            except (ValueError, TypeError) as err:
                raise ConfigError(f"{path}:{number}: not a ledger record ({' '.join(str(err).split())[:200]}); "
                                  "fix or remove the line (the ledger is one JSON record per line)") from None
