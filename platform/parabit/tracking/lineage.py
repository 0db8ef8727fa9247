"""Where a run comes from: MLflow's system tags (source, user, git commit) plus whether the checkout had changes, and
the command line that started it, so every run can be traced back to the code and the command that made it.

On a cluster the uploaded working directory has no ``.git``: ``infra/submit.sh`` passes the commit and the dirty flag
of the submitting checkout as ``PARABIT_GIT_COMMIT`` / ``PARABIT_GIT_DIRTY``, which win when set.
"""

from __future__ import annotations

import logging
import os
import shlex
import sys
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from mlflow.tracking.context.registry import resolve_tags
from mlflow.utils.mlflow_tags import MLFLOW_GIT_COMMIT

from parabit.paths import PROJECT_ROOT
from parabit.tracking import tags

log = logging.getLogger(__name__)

GIT_DIRTY = "parabit.git.dirty"


def command_line() -> str:
    """The command that started this process, as a user would type it (``parabit train --config ...``)."""
    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    if program.endswith(".py"):
        program = f"python {shlex.quote(sys.argv[0])}"
    return " ".join([program, *(shlex.quote(a) for a in sys.argv[1:])])


@lru_cache(maxsize=1)
def _checkout() -> dict[str, str]:
    """The commit of the project checkout and whether it has uncommitted changes to tracked files."""
    commit, dirty = os.environ.get("PARABIT_GIT_COMMIT"), os.environ.get("PARABIT_GIT_DIRTY")
    if commit:
        return {MLFLOW_GIT_COMMIT: commit, GIT_DIRTY: dirty or "unknown"}
    try:
        import git

        repo = git.Repo(PROJECT_ROOT, search_parent_directories=True)
        return {MLFLOW_GIT_COMMIT: repo.head.commit.hexsha, GIT_DIRTY: str(repo.is_dirty(untracked_files=False)).lower()}
    except Exception as err:  # noqa: BLE001 - no git, no repository: the tags say so
        log.debug("no git checkout at %s (%s)", PROJECT_ROOT, err)
        return {GIT_DIRTY: "unknown"}


def system_tags() -> dict[str, str]:
    """MLflow's context tags (``mlflow.source.name``, ``mlflow.source.type``, ``mlflow.user``, git commit, branch
    and repository when the entry point is in a checkout), the checkout's commit and dirty flag, and the command."""
    return {**resolve_tags({}), **_checkout(), tags.COMMAND: command_line()}


def uncommitted_changes(ignore: Iterable[Path] = ()) -> list[str] | None:
    """The tracked files of the project checkout that differ from its commit (staged or not), as paths relative to
    its top, leaving out those under ``ignore`` (e.g. the files a command itself writes); None when the project is
    not a git checkout."""
    try:
        import git

        repo = git.Repo(PROJECT_ROOT, search_parent_directories=True)
        top = Path(repo.working_tree_dir).resolve()
        lines = repo.git.status("--porcelain", "--untracked-files=no").splitlines()
    except Exception as err:  # noqa: BLE001 - no git, no repository: nothing can be said
        log.debug("no git checkout at %s (%s)", PROJECT_ROOT, err)
        return None
    skipped = [Path(path).resolve() for path in ignore]
    changed = [line[3:].split(" -> ")[-1].strip('"') for line in lines if len(line) > 3]
    return [path for path in changed
            if not any((top / path).resolve() == skip or skip in (top / path).resolve().parents for skip in skipped)]


def checkout_commit() -> str:
    """The commit of the project checkout (``unknown`` outside one)."""
    return _checkout().get(MLFLOW_GIT_COMMIT, "unknown")
