"""Typed configuration: pydantic models loaded from YAML, with one-line errors that name the file, the field and the value.

Every config class derives from :class:`Config`: unknown keys and non-finite numbers (``nan``, ``inf``) are refused,
each field's default lives in its class, and ``Config.model_json_schema()`` gives editors a JSON Schema
(``parabit config schema``). ``load_config(TrainConfig, "x.yaml", {"optim.lr": 0.01})`` reads a file, applies
``--set`` overrides and validates; every mistake raises :class:`ConfigError` with a message that says where and what.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError
from pydantic.fields import FieldInfo

T = TypeVar("T", bound=BaseModel)


class ConfigError(ValueError):
    """A configuration file or value is wrong; the message (one line) says where and what to do."""


class Config(BaseModel):
    """Base of every parabit configuration section: strict about keys, finite about numbers. A field's docstring
    (the string right under it) is its description in the JSON Schema that ``parabit config schema`` prints."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, protected_namespaces=(),
                              validate_default=True, use_attribute_docstrings=True)


class _ConfigFileMarker:
    """Metadata of :data:`ConfigFile` fields (see :func:`is_config_file`)."""

    def __repr__(self) -> str:
        return "ConfigFile"


CONFIG_FILE = _ConfigFileMarker()

ConfigFile = Annotated[str, StringConstraints(min_length=1), CONFIG_FILE]
"""A field naming another config file (or a folder of them) that the caller hands in: the library has no default
for it, so it never reads a file of the project above it (configs, search spaces) by itself. A relative path is
read from the project folder (:func:`parabit.paths.project_path`), whichever file names it. Where such a file lives
is not a setting: digests of settings (the reproduction ledger's) leave these fields out and cover what was read
from the file instead (:func:`config_file_fields`)."""


def is_config_file(field: FieldInfo) -> bool:
    """Is ``field`` a :data:`ConfigFile` (also inside ``ConfigFile | None``)?"""
    return CONFIG_FILE in field.metadata or _marked(field.annotation)


def _marked(annotation: Any) -> bool:
    if typing.get_origin(annotation) is Annotated and CONFIG_FILE in annotation.__metadata__:
        return True
    return any(_marked(argument) for argument in typing.get_args(annotation))


def config_file_fields(config: BaseModel) -> dict[str, Any]:
    """The :data:`ConfigFile` fields of ``config`` and of the sections in it, as the ``exclude`` argument of
    ``model_dump`` takes them (``{"train": True, "wieting": {"train": True}}``); sections in lists are not walked."""
    fields: dict[str, Any] = {}
    for name, field in type(config).model_fields.items():
        value = getattr(config, name)
        if is_config_file(field):
            fields[name] = True
        elif isinstance(value, BaseModel) and (inner := config_file_fields(value)):
            fields[name] = inner
    return fields


def from_dict(cls: type[T], data: Mapping[str, Any] | None, where: str = "config") -> T:
    """Validate ``data`` (nested mappings, as read from YAML) into ``cls``; raises :class:`ConfigError` naming
    ``where`` and the failing field."""
    data = dict(data or {})
    check_finite(data, where)
    try:
        return cls.model_validate(data)
    except ValidationError as err:
        raise ConfigError(describe(err, cls, where)) from None


def to_dict(config: BaseModel) -> dict:
    """A config as plain nested values (for MLflow params, checkpoints and Ray workers)."""
    return config.model_dump(mode="json")


def reconfigure(config: T, overrides: Mapping[str, Any]) -> T:
    """``config`` with dotted ``overrides`` applied (as ``--set``), validated again; a :class:`ConfigError` names
    the config's ``name`` where it has one."""
    data = to_dict(config)
    for dotted, value in overrides.items():
        apply_override(data, dotted, value)
    return from_dict(type(config), data, where=f"config {getattr(config, 'name', type(config).__name__)}")


def load_config(cls: type[T], path: str | Path, overrides: Mapping[str, Any] | None = None) -> T:
    """Load ``cls`` from a YAML file; ``overrides`` are dotted keys (``{"optim.lr": 0.01}``) applied on top."""
    data = read_yaml(path)
    for dotted, value in (overrides or {}).items():
        apply_override(data, dotted, value)
    return from_dict(cls, data, where=str(path))


def read_yaml(path: str | Path) -> dict:
    """The top-level mapping of a YAML file; a missing, unreadable or malformed file is a :class:`ConfigError`."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"config file {path} is a folder, not a YAML file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"config file {path} cannot be read: {err}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        first = " ".join(str(err).split())
        raise ConfigError(f"{path}: not valid YAML: {first}") from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: the top level must be a mapping of keys to values, not {type(data).__name__}")
    return dict(data)


def parse_override(text: str) -> tuple[str, Any]:
    """``"optim.lr=0.01"`` → ``("optim.lr", 0.01)``; the value is parsed as YAML (numbers, bools, lists)."""
    key, separator, raw = text.partition("=")
    key = key.strip()
    if not separator:
        raise ConfigError(f"--set {text!r} must look like key.path=value")
    if not key or any(not part.strip() for part in key.split(".")):
        raise ConfigError(f"--set {text!r}: the key must be dotted field names such as optim.lr, without empty parts")
    if not raw.strip():
        raise ConfigError(f"--set {text!r}: no value after '=' (write null for none, '' for an empty string)")
    try:
        return key, yaml.safe_load(raw)
    except yaml.YAMLError:
        raise ConfigError(f"--set {text!r}: the value is not valid YAML") from None


def parse_overrides(texts: Iterable[str]) -> dict[str, Any]:
    """Several ``--set`` texts as one mapping of dotted keys to values (a later key wins)."""
    return dict(parse_override(text) for text in texts)


def apply_override(data: dict, dotted: str, value: Any) -> None:
    """Set ``data["a"]["b"] = value`` for ``dotted == "a.b"``, creating intermediate mappings. A key that runs
    through a value (``name.sub`` where ``name`` is a string) is a :class:`ConfigError`."""
    *parents, leaf = dotted.split(".")
    walked = []
    for part in parents:
        walked.append(part)
        child = data.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"--set {dotted}: {'.'.join(walked)} is a value ({child!r:.40}), not a section "
                              f"with fields; set {'.'.join(walked)}=... instead")
        data = child
    data[leaf] = value


def check_finite(data: Any, where: str, path: str = "") -> None:
    """Refuse ``nan``/``inf`` anywhere in ``data`` (also inside free-form option mappings and lists)."""
    if isinstance(data, float) and not math.isfinite(data):
        raise ConfigError(f"{where}: {path or 'value'}: {data} is not a finite number")
    if isinstance(data, Mapping):
        for key, value in data.items():
            check_finite(value, where, f"{path}.{key}" if path else str(key))
    elif isinstance(data, (list, tuple)):
        for index, value in enumerate(data):
            check_finite(value, where, f"{path}[{index}]")


def check_name(value: str, names: Iterable[str], what: str) -> str:
    """``value`` if it is one of ``names`` (a registry's keys); else a ValueError that lists them. For validators."""
    names = sorted(names)
    if value not in names:
        raise ValueError(f"unknown {what} {value!r}; choose one of {names}")
    return value


# -- error messages -----------------------------------------------------------------------------------------------

MAX_ERRORS_SHOWN = 3


def describe(err: ValidationError, cls: type[BaseModel], where: str) -> str:
    """One line for a pydantic error: ``where: field.path: what is wrong (got value)``; unknown keys grouped by
    section; at most :data:`MAX_ERRORS_SHOWN` problems, then how many more."""
    parts: list[str] = []
    unknown: dict[tuple, list[str]] = {}
    for error in err.errors(include_url=False):
        if error["type"] == "extra_forbidden":
            *section, key = error["loc"]
            unknown.setdefault(tuple(section), []).append(str(key))
            continue
        location = _dotted(error["loc"])
        message = error["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
        shown = "" if error["type"].startswith("value_error") or "input" not in error else \
            f" (got {_short(error['input'])})"
        parts.append(f"{location}: {message}{shown}" if location else f"{message}{shown}")
    for section, keys in unknown.items():
        owner = section_class(cls, section)
        valid = sorted(owner.model_fields) if owner is not None else []
        inside = f" in {_dotted(section)}" if section else ""
        names = repr(keys[0]) if len(keys) == 1 else str(keys)
        parts.insert(0, f"unknown key{'s' if len(keys) > 1 else ''} {names}{inside}; valid keys: {valid}")
    more = f" (and {len(parts) - MAX_ERRORS_SHOWN} more)" if len(parts) > MAX_ERRORS_SHOWN else ""
    return f"{where}: " + "; ".join(parts[:MAX_ERRORS_SHOWN]) + more


def _dotted(loc: tuple) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif isinstance(part, str) and not part.startswith("function-"):
            text += f".{part}" if text else part
    return text


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def section_class(cls: type[BaseModel], loc: Iterable) -> type[BaseModel] | None:
    """The config class at ``loc`` below ``cls`` (``("optim",)`` → ``OptimConfig``), or None if it is not a model."""
    current: Any = cls
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)) or part not in current.model_fields:
            return None
        current = model_in(current.model_fields[part].annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def model_in(annotation: Any) -> Any:
    """The config class inside an annotation (``OptimConfig``, ``OptimConfig | None``, ``tuple[SourceConfig, ...]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in typing.get_args(annotation):
        found = model_in(argument)
        if found is not None:
            return found
    return None


def field_paths(cls: type[BaseModel], prefix: str = "") -> list[str]:
    """Every dotted field path of ``cls`` (sections and leaves), e.g. ``["optim", "optim.lr", ...]``."""
    paths = []
    for name, field in cls.model_fields.items():
        path = f"{prefix}{name}"
        paths.append(path)
        nested = model_in(field.annotation)
        if nested is not None and typing.get_origin(field.annotation) is not tuple:
            paths.extend(field_paths(nested, f"{path}."))
    return paths


def check_field_path(cls: type[BaseModel], path: str, where: str) -> None:
    """Raise :class:`ConfigError` unless ``path`` (e.g. ``objective.margin``) names a field of ``cls``."""
    current: Any = cls
    walked = []
    for part in path.split("."):
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            raise ConfigError(f"{where}: {path!r}: {'.'.join(walked)} is a value, not a section with fields")
        if part not in current.model_fields:
            raise ConfigError(f"{where}: unknown parameter {path!r}: {current.__name__} has no field {part!r}; "
                              f"its fields are {sorted(current.model_fields)}")
        walked.append(part)
        current = model_in(current.model_fields[part].annotation)


__all__ = ["Config", "ConfigError", "ConfigFile", "apply_override", "check_field_path", "check_name", "check_finite",
           "config_file_fields", "describe", "field_paths", "from_dict", "is_config_file", "load_config",
           "parse_override", "parse_overrides", "read_yaml", "reconfigure", "section_class", "to_dict"]
