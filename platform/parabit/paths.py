"""Where parabit finds its data and keeps its outputs.

One place decides every default location, so jobs, tests and the MLflow store agree on them.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]


class DataNotFoundError(FileNotFoundError):
    """The data directory, or a file expected inside it, does not exist."""


def data_root() -> Path:
    """The directory holding the shipped data sets.

    ``$PARABIT_DATA`` when set; otherwise ``../shared/data`` next to the project root.
    """
    configured = os.environ.get("PARABIT_DATA")
    root = Path(configured).expanduser() if configured else PROJECT_ROOT.parent / "shared" / "data"
    if not root.is_dir():
        how = "PARABIT_DATA points at" if configured else "the default data directory"
        raise DataNotFoundError(
            f"{how} {root}, which is not a directory. Set PARABIT_DATA to the folder that holds "
            "sts/, sick2014/, msrp/, bitext/, ... (see shared/data/SOURCES.md)."
        )
    return root


def data_path(*parts: str) -> Path:
    """A path under :func:`data_root`, checked to exist, e.g. ``data_path("sick2014", "SICK_train.txt")``."""
    path = data_root().joinpath(*parts)
    if not path.exists():
        raise DataNotFoundError(f"expected data file {path} does not exist (data root: {data_root()})")
    return path


def output_root() -> Path:
    """Where jobs write derived data, checkpoints and Ray results: ``$PARABIT_OUTPUT`` or ``<project>/outputs``."""
    configured = os.environ.get("PARABIT_OUTPUT")
    root = Path(configured).expanduser() if configured else PROJECT_ROOT / "outputs"
    root.mkdir(parents=True, exist_ok=True)
    return root.resolve()
