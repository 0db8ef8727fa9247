"""What every command shares: the ``--config`` / ``--set`` / ``--verbose`` flags, loading configs with them, the
errors that count as the user's mistakes, and how much a command prints."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from parabit.config import ConfigError, apply_override, from_dict, load_config, parse_overrides
from parabit.data.errors import DataFormatError
from parabit.output import configure_output
from parabit.paths import DataNotFoundError, ProjectNotFoundError
from parabit.runlock import RunInUse

# Mistakes in what the user gave (a config, a --set, a data file, a busy run name, no project to read a shipped
# config from): one line, exit code 2.
USER_ERRORS = (ConfigError, DataFormatError, DataNotFoundError, ProjectNotFoundError, RunInUse)

def one_line(text: str) -> str:
    """``text`` on one line (YAML and Ray messages span several)."""
    return " ".join(text.split())


def common_options(command: Callable) -> Callable:
    """``--set KEY=VALUE`` (repeatable) and ``--verbose``, the same on every command. The command receives
    ``overrides`` (a dict of dotted keys, already parsed) and output is configured before it runs."""

    @click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
                  help="override a config field, e.g. --set optim.epochs=2 (repeatable; the value is YAML)")
    @click.option("-v", "--verbose", is_flag=True, help="also show Ray's and MLflow's own logs")
    @functools.wraps(command)
    def run(*args, overrides: tuple[str, ...], verbose: bool, **kwargs):
        configure_output(verbose)
        return command(*args, overrides=parse_overrides(overrides), **kwargs)

    return run


def config_path(required: bool = True, multiple: bool = False, default: str | None = None,
                help_text: str = "YAML config file") -> Callable:
    """The ``--config`` option: a path (checked to exist when the config is loaded, with a one-line error)."""
    return click.option("--config", "config_paths" if multiple else "config_path", required=required and not default,
                        multiple=multiple, default=default, metavar="PATH", help=help_text)


def load(cls: type, path: str | Path | None, overrides: dict[str, Any]):
    """``cls`` from ``path`` (its defaults when None) with ``overrides`` applied."""
    if path is None:
        data: dict = {}
        for dotted, value in overrides.items():
            apply_override(data, dotted, value)
        return from_dict(cls, data, where=f"{cls.__name__} defaults")
    return load_config(cls, path, overrides)
