"""The ``parabit`` command: one click group, a subcommand per job, the shared flags and error handling written once.

``parabit --help`` lists every command; ``parabit <command> --help`` describes one. The library's commands are
listed in :data:`COMMANDS` (loaded lazily, so help is fast); commands defined above the library (the ``pipelines``
package: ``main``, ``backtranslate``, ``phrases``, ``reproduce``) are contributed through the entry-point group
``parabit.commands`` that the project's ``pyproject.toml`` declares, so the library never imports them.

Every way in (``parabit <command>``, ``python jobs/<command>.py``, ``ray job submit -- python jobs/...``) goes
through :func:`run_command`, which owns what a user sees when something is wrong: a mistake in what they gave (a
config, a ``--set``, a file, a tracking server's login it lacks or that is refused, asked before the command starts:
:func:`parabit.tracking.access.check_access`) is one line on stderr and exit code 2; a diverged run, or one whose
workers the cluster could not place in time, one line and exit 1; Ctrl-C or SIGTERM exit 130 / 143 with every
MLflow run closed. No traceback for any of these.
"""

from __future__ import annotations

import importlib
import signal
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points

import click

from parabit import __version__
from parabit.cli.options import USER_ERRORS, one_line

ENTRY_POINT_GROUP = "parabit.commands"

# name -> "module:attribute" of the library's commands (imported only when used or listed).
COMMANDS = {
    "train": "parabit.cli.training:train",
    "sweep": "parabit.cli.training:sweep",
    "evaluate": "parabit.cli.training:evaluate",
    "promote": "parabit.cli.models:promote",
    "serve": "parabit.cli.models:serve",
    "translate-test": "parabit.cli.models:translate_test",
    "translate-sick": "parabit.cli.data:translate_sick",
    "build-dictionaries": "parabit.cli.data:build_dictionaries",
    "bildrl-retrieval": "parabit.cli.analyses:bildrl_retrieval",
    "config": "parabit.cli.configs:config",
    "replay": "parabit.cli.tracking:replay",
}


# Commands that never open the tracking store: they run without asking its server for a login.
UNTRACKED_COMMANDS = frozenset({"config", "build-dictionaries", "bildrl-retrieval"})


class ParabitGroup(click.Group):
    """The library's commands plus those other installed packages register under :data:`ENTRY_POINT_GROUP`."""

    def _sources(self) -> dict[str, str]:
        plugins = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
        return {**plugins, **COMMANDS}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self._sources())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = self._sources().get(name)
        if target is None:
            return None
        module, _, attribute = target.partition(":")
        return getattr(importlib.import_module(module), attribute)


@click.group(cls=ParabitGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="parabit")
def cli() -> None:
    """parabit: sentence embeddings learned from bilingual supervision, on Ray (Data, Train, Tune) and MLflow."""


class Terminated(SystemExit):
    """SIGTERM (e.g. ``ray job stop``), raised in the main thread so open MLflow runs are closed as KILLED."""


def _raise_terminated(signum, frame) -> None:
    raise Terminated(143)


def run_command(command: click.Command = cli, argv: Sequence[str] | None = None, prog_name: str | None = None) -> int:
    """Run ``command`` (default: the whole group) on ``argv`` and return the process exit code, turning every
    user mistake into one line on stderr (see the module docstring)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if prog_name is None:
        prog_name = "parabit" if command is cli else f"parabit {command.name}"
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        if _tracks(command, args):
            from parabit.tracking.access import check_access

            check_access()  # a missing or refused login: one line and exit 2 now, not after data preparation
        result = command.main(args=args, prog_name=prog_name, standalone_mode=False)
        return result if isinstance(result, int) else 0
    except click.exceptions.Exit as done:  # --help, --version
        return done.exit_code
    except click.ClickException as err:
        print(f"error: {one_line(err.format_message())}", file=sys.stderr)
        return err.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt) as err:
        cause = err.__cause__ or err.__context__ if isinstance(err, click.exceptions.Abort) else err
        reason = one_line(str(cause)) if cause is not None and str(cause) else "stopped"
        print(f"interrupted: {reason}", file=sys.stderr)
        return 130
    except Terminated:
        print("terminated (SIGTERM): open MLflow runs were closed as KILLED", file=sys.stderr)
        return 143
    except Exception as err:  # noqa: BLE001 - only the user's mistakes become one line; the rest re-raise
        user_error = _user_error(err)
        if user_error is not None:
            print(f"error: {one_line(str(user_error))}", file=sys.stderr)
            return 2
        from parabit.training import RunStopped

        if isinstance(err, RunStopped):  # a run or sweep stopped: its message says why and what to do
            print(f"error: {one_line(str(err))}", file=sys.stderr)
            return 1
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


def _tracks(command: click.Command, args: Sequence[str]) -> bool:
    """Whether ``command`` run on ``args`` may use the tracking store (not for help, the version, ``--no-mlflow``, or
    an :data:`UNTRACKED_COMMANDS` command)."""
    if any(arg in ("-h", "--help", "--version", "--no-mlflow") for arg in args):
        return False
    if command is cli:
        return bool(args) and args[0] not in UNTRACKED_COMMANDS
    return command.name not in UNTRACKED_COMMANDS


def _user_error(err: BaseException) -> BaseException | None:
    """``err`` itself, or the user error a Ray task wrapped (a bad file read inside a Ray Data task); a tracking
    server's refusal of the login or of a change (e.g. ``promote`` by a read-only user) as its one-line error."""
    seen = 0
    while err is not None and seen < 5:
        if isinstance(err, USER_ERRORS):
            return err
        if "mlflow" in sys.modules:  # else no MLflow error can have been raised (and importing it costs seconds)
            from parabit.tracking.access import access_denied, is_access_error
            from parabit.tracking.store import tracking_uri

            if is_access_error(err):
                return access_denied(tracking_uri(), err.error_code, "make this change")
        err = getattr(err, "cause", None) or err.__cause__
        seen += 1
    return None


def main() -> None:
    """The ``parabit`` console script."""
    sys.exit(run_command(cli))


__all__ = ["COMMANDS", "ENTRY_POINT_GROUP", "cli", "main", "run_command"]
