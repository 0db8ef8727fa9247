"""Where parabit finds its project files and data, and keeps its outputs.

One place decides every default location, so jobs, tests and the MLflow store agree on them.

The **project** is a parabit checkout: the folder with parabit's ``pyproject.toml``, from which the relative paths
that callers hand in (config files, search spaces, documents, in commands and inside configs) are read. The library
names none of those files itself. Where the library is installed says nothing
about it in general: a job under ``ray job submit`` imports parabit from a py_module Ray unpacked somewhere, and an
installed wheel lives in site-packages. :func:`project_root` therefore takes the first parabit checkout of

1. the checkout this code is part of (a source tree or an editable install: local use from any current directory);
2. the current directory and its parents (a job's working directory, which ``ray job submit --working-dir`` makes
   the uploaded project);
3. the folders on ``$PYTHONPATH``: Ray puts a job's working directory there for the driver and every worker, and
   that is all a Ray Tune trial has left once Tune changed its current directory to the trial's own folder;
4. ``$PARABIT_PROJECT``: where the project is when parabit runs from an installed package and nothing above says
   (the container image and the cluster launcher's nodes set it), so a job that brings its own project still uses
   that one;

and fails with :class:`ProjectNotFoundError`, saying what it tried, when there is none.

Where a path is written down to be read in another checkout (the results ledger, the digests that key it),
:func:`portable` writes it relative to the output, data or project folder and :func:`local` reads it back here.
"""

from __future__ import annotations

import functools
import os
import tomllib
from pathlib import Path
from typing import Any

PROJECT_ENV = "PARABIT_PROJECT"


class DataNotFoundError(FileNotFoundError):
    """The data directory, or a file expected inside it, does not exist."""


class ProjectNotFoundError(FileNotFoundError):
    """No parabit project checkout to resolve a project-relative path (a shipped config, the default data root)."""


@functools.lru_cache(maxsize=64)
def is_project(folder: Path) -> bool:
    """Is ``folder`` a parabit checkout (its ``pyproject.toml`` names the project ``parabit``)?"""
    try:
        with open(folder / "pyproject.toml", "rb") as file:
            return tomllib.load(file).get("project", {}).get("name") == "parabit"
    except (OSError, tomllib.TOMLDecodeError):
        return False


def project_root() -> Path:
    """The parabit checkout that project-relative paths are read from (see the module docstring for the order)."""
    code_checkout = Path(__file__).resolve().parents[2]
    if is_project(code_checkout):
        return code_checkout
    cwd = Path.cwd().resolve()
    python_path = [Path(entry) for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    for folder in (cwd, *cwd.parents, *python_path):
        if is_project(folder):
            return folder
    configured = os.environ.get(PROJECT_ENV)
    if configured:
        root = Path(configured).expanduser().resolve()
        if not is_project(root):
            raise ProjectNotFoundError(f"{PROJECT_ENV} points at {root}, which is not a parabit checkout (no "
                                       "pyproject.toml naming the project 'parabit')")
        return root
    raise ProjectNotFoundError(
        f"no parabit project found: parabit runs from {Path(__file__).resolve().parent}, which is not inside a "
        f"checkout, and neither {cwd}, a folder above it nor a folder on PYTHONPATH is one (a folder with parabit's "
        f"pyproject.toml). Run from the checkout (a job: submit it with --working-dir set to the checkout, as "
        f"infra/submit.sh does), or set {PROJECT_ENV} to its path.")


def project_path(path: str | os.PathLike) -> Path:
    """``path`` as given when absolute, else under :func:`project_root`: how every relative path a caller hands in is
    read (a config a command was given, e.g. ``jobs/configs/main.yaml``, and the config files a config names)."""
    path = Path(path).expanduser()
    return path if path.is_absolute() else project_root() / path


def __getattr__(name: str):
    # ``PROJECT_ROOT``, kept for callers of the former constant: resolved when read, not when parabit is imported.
    if name == "PROJECT_ROOT":
        return project_root()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def data_root() -> Path:
    """The directory holding the shipped data sets.

    ``$PARABIT_DATA`` when set; otherwise ``../shared/data`` next to the project root.
    """
    configured = os.environ.get("PARABIT_DATA")
    if not configured:
        try:
            project = project_root()
        except ProjectNotFoundError as err:
            raise DataNotFoundError(f"PARABIT_DATA is not set and the default data directory (../shared/data next "
                                    f"to the project) cannot be found: {err}") from None
    root = Path(configured).expanduser() if configured else project.parent / "shared" / "data"
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
    root = Path(configured).expanduser() if configured else project_root() / "outputs"
    root.mkdir(parents=True, exist_ok=True)
    return root.resolve()


PIPELINE_REFERENCE = "pipeline:"


def pipeline_stage(reference: str) -> Path:
    """``pipeline:<name>/<stage>`` as the folder of that stage's output (``<output root>/pipelines/<name>/<stage>``,
    where every pipeline writes it); any other value is a path, read from the project folder when relative."""
    if reference.startswith(PIPELINE_REFERENCE):
        return output_root() / "pipelines" / reference.removeprefix(PIPELINE_REFERENCE)
    return project_path(reference)


# How a path is written where it must not depend on the checkout (the results ledger, digests): relative to one of
# these roots.
_ROOTS = (("$OUTPUTS", output_root), ("$DATA", data_root), ("$PROJECT", project_root))


def _roots() -> list[tuple[str, str]]:
    roots = []
    for name, root in _ROOTS:
        try:
            roots.append((name, str(root())))
        except FileNotFoundError:  # no data folder here: its paths stay as they are
            continue
    return roots


def _map_strings(value: Any, convert) -> Any:
    """``value`` with ``convert`` applied to every string in it (dicts and lists walked; tuples become lists)."""
    if isinstance(value, dict):
        return {key: _map_strings(item, convert) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_map_strings(item, convert) for item in value]
    return convert(value) if isinstance(value, str) else value


def _rebase(text: str, prefixes: list[tuple[str, str]]) -> str:
    """``text`` with the first matching ``old`` path prefix (a whole path component) replaced by ``new``."""
    for old, new in prefixes:
        if text == old or text.startswith(old + "/"):
            return new + text[len(old):]
    return text


def portable(value: Any) -> Any:
    """``value`` (a config's dict, a plan's facts) with every absolute path under the output, data or project folder
    written as ``$OUTPUTS/...``, ``$DATA/...`` or ``$PROJECT/...``."""
    prefixes = [(root, name) for name, root in _roots()]
    return _map_strings(value, lambda text: _rebase(text, prefixes))


def local(value: Any) -> Any:
    """The inverse of :func:`portable` in this checkout."""
    prefixes = [(name, root) for name, root in _roots()]
    return _map_strings(value, lambda text: _rebase(text, prefixes))
