"""Typed configuration: dataclasses validated in ``__post_init__``, loaded from YAML with precise errors.

Each config dataclass is the one place its defaults live. ``load_config(TrainConfig, "x.yaml")`` rejects unknown
keys (naming the file, the key and the valid keys), converts lists to tuples where a field is a tuple, and
builds nested dataclasses from nested mappings.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml

T = TypeVar("T")


class ConfigError(ValueError):
    """A configuration file or value is wrong; the message says where and what to do."""


def _dataclass_type(annotation: Any) -> type | None:
    if dataclasses.is_dataclass(annotation):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            if dataclasses.is_dataclass(arg):
                return arg
    return None


def from_dict(cls: type[T], data: Mapping[str, Any] | None, where: str = "config") -> T:
    """Build dataclass ``cls`` from a mapping, recursively, rejecting unknown keys."""
    data = dict(data or {})
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown} for {cls.__name__}; valid keys: {sorted(fields)}")
    values = {}
    for name, value in data.items():
        annotation = hints[name]
        nested = _dataclass_type(annotation)
        if nested is not None and isinstance(value, Mapping):
            value = from_dict(nested, value, where=f"{where}.{name}")
        elif typing.get_origin(annotation) is tuple and isinstance(value, list):
            value = tuple(value)
        values[name] = _checked(value, annotation, f"{where}.{name}")
    try:
        return cls(**values)
    except (TypeError, ValueError) as err:
        if isinstance(err, ConfigError):
            raise
        raise ConfigError(f"{where}: {err}") from err


_SCALARS = {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}


def _checked(value: Any, annotation: Any, where: str) -> Any:
    """``value`` if it fits ``annotation`` (plain scalars, optional, tuples of them, nested configs), else a
    :class:`ConfigError` naming the key, what it expects and what it got. A number written as a string (PyYAML reads
    ``1e-3`` as one) is accepted for a float."""
    options = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) else (
        annotation,)
    if value is None:
        if type(None) in options or annotation is Any:
            return value
        raise ConfigError(f"{where}: a value is required (got nothing)")
    for option in options:
        if option is Any or option is type(None):
            continue
        if option in _SCALARS:
            if option is float and isinstance(value, str):
                try:
                    return float(value)
                except ValueError:
                    continue
            if isinstance(value, option) and not (option in (int, float) and isinstance(value, bool)):
                return value
            if option is float and isinstance(value, int) and not isinstance(value, bool):
                return value
        elif dataclasses.is_dataclass(option):
            if isinstance(value, (option, Mapping)):  # a mapping inside a tuple: the owner's __post_init__ builds it
                return value
        elif typing.get_origin(option) is tuple and isinstance(value, tuple):
            item = (typing.get_args(option) or (Any,))[0]
            return tuple(_checked(v, item, f"{where}[{i}]") for i, v in enumerate(value))
        elif typing.get_origin(option) in (list, dict) or option in (list, dict):
            if isinstance(value, typing.get_origin(option) or option):
                return value
        else:
            return value  # a type this check does not know: left to the dataclass's own validation
    wanted = " or ".join(
        _SCALARS.get(o) or (f"a mapping of {o.__name__} fields" if dataclasses.is_dataclass(o) else
                            "a list" if typing.get_origin(o) in (tuple, list) or o in (tuple, list) else
                            "a mapping" if typing.get_origin(o) is dict or o is dict else str(o))
        for o in options if o is not type(None))
    raise ConfigError(f"{where}: expected {wanted}, got {value!r:.80} ({type(value).__name__})")


def load_config(cls: type[T], path: str | Path, overrides: Mapping[str, Any] | None = None) -> T:
    """Load ``cls`` from a YAML file; ``overrides`` are dotted keys (``{"optim.lr": 0.01}``) applied on top."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: the top level must be a mapping of keys to values")
    for dotted, value in (overrides or {}).items():
        apply_override(data, dotted, value)
    return from_dict(cls, data, where=str(path))


def apply_override(data: dict, dotted: str, value: Any) -> None:
    """Set ``data["a"]["b"] = value`` for ``dotted == "a.b"``, creating intermediate mappings."""
    *parents, leaf = dotted.split(".")
    for part in parents:
        data = data.setdefault(part, {})
    data[leaf] = value


def parse_override(text: str) -> tuple[str, Any]:
    """``"optim.lr=0.01"`` → ``("optim.lr", 0.01)``; the value is parsed as YAML (numbers, bools, lists)."""
    if "=" not in text:
        raise ConfigError(f"override {text!r} must look like key.path=value")
    key, raw = text.split("=", 1)
    return key.strip(), yaml.safe_load(raw)


def to_dict(config: Any) -> dict:
    """A config dataclass as plain nested dicts (for MLflow params and checkpoints)."""
    return dataclasses.asdict(config)
