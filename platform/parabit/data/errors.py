"""How readers report bad input: a precise error, or a quarantine that keeps the bad line and its reason."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path


class DataFormatError(ValueError):
    """A data file is malformed. The message names the file, the 1-based line number and the problem."""

    def __init__(self, path: str | Path, line: int | None, problem: str):
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True)
class RejectedLine:
    """One line kept aside by a quarantining reader."""

    path: str
    line: int
    reason: str
    text: str


@dataclass
class Quarantine:
    """Collects bad lines instead of raising, so a bitext reader can go on and nothing is lost silently.

    Pass one to a reader's ``quarantine=`` argument; afterwards ``rejected`` holds every bad line with its
    reason and ``counts`` how many there were of each reason.
    """

    rejected: list[RejectedLine] = field(default_factory=list)

    def add(self, path: str | Path, line: int, reason: str, text: str) -> None:
        self.rejected.append(RejectedLine(str(path), line, reason, text))

    @property
    def counts(self) -> Counter:
        return Counter(r.reason for r in self.rejected)

    def __len__(self) -> int:
        return len(self.rejected)


def reject(quarantine: Quarantine | None, path: str | Path, line: int, reason: str, text: str) -> None:
    """Quarantine a bad line when a quarantine is given, else raise :class:`DataFormatError`."""
    if quarantine is None:
        raise DataFormatError(path, line, reason)
    quarantine.add(path, line, reason, text)


def lookup(choices: Mapping[str, object] | Collection[str], key: str, what: str):
    """``choices[key]`` for a mapping, ``key`` itself for a collection of names; for an unknown key, a ValueError
    naming ``what`` (e.g. "SICK split") and listing the choices."""
    if key not in choices:
        raise ValueError(f"unknown {what} {key!r}; choose one of {list(choices)}")
    return choices[key] if isinstance(choices, Mapping) else key
