from pathlib import Path

import pytest

from parabit.paths import PROJECT_ROOT, DataNotFoundError, data_root


def test_default_data_root_is_shared_beside_the_project(monkeypatch):
    monkeypatch.delenv("PARABIT_DATA", raising=False)
    assert data_root() == PROJECT_ROOT.parent / "shared" / "data"


def test_parabit_data_overrides(monkeypatch, tmp_path):
    monkeypatch.setenv("PARABIT_DATA", str(tmp_path))
    assert data_root() == tmp_path


def test_missing_data_root_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setenv("PARABIT_DATA", str(tmp_path / "absent"))
    with pytest.raises(DataNotFoundError, match="Set PARABIT_DATA"):
        data_root()


# --- the project folder, wherever parabit is installed --------------------------------------------------------------

_PROBE = r"""
import json, os, sys
from parabit.paths import ProjectNotFoundError, DataNotFoundError, project_root, project_path, data_root
found = {"package": os.path.dirname(sys.modules["parabit"].__file__)}
try:
    found["project"] = str(project_root())
    found["config"] = str(project_path("jobs/configs/main.yaml"))
except ProjectNotFoundError as err:
    found["error"] = str(err)
try:
    found["data"] = str(data_root())
except DataNotFoundError as err:
    found["data_error"] = str(err)
print(json.dumps(found))
"""


def _probe(package_parent: Path, cwd: Path, **env: str) -> dict:
    """parabit.paths as a process sees it that imports parabit from ``package_parent`` (a copy outside any checkout:
    a Ray py_module, a wheel in site-packages) and runs in ``cwd``."""
    import json
    import os
    import subprocess
    import sys

    environment = {k: v for k, v in os.environ.items() if k not in ("PARABIT_PROJECT", "PARABIT_DATA", "PYTHONPATH")}
    environment.update(env)
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(package_parent), env.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-c", _PROBE], cwd=cwd, env=environment, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def installed_elsewhere(tmp_path_factory):
    """A copy of the parabit package in a folder that is no checkout, as Ray unpacks a py_module."""
    import shutil

    parent = tmp_path_factory.mktemp("py_modules_files")
    shutil.copytree(PROJECT_ROOT / "platform" / "parabit", parent / "parabit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return parent


def test_the_checkout_of_the_code_is_the_project_from_any_directory(tmp_path):
    from parabit.paths import project_root

    assert project_root() == PROJECT_ROOT == Path(__file__).resolve().parents[1]
    found = _probe(PROJECT_ROOT / "platform", tmp_path)  # the source tree itself, run from elsewhere
    assert found["project"] == str(PROJECT_ROOT)


def test_code_installed_elsewhere_finds_the_project_it_runs_in(installed_elsewhere, tmp_path):
    # A job's driver: the current directory is the uploaded project (ray job submit --working-dir).
    found = _probe(installed_elsewhere, PROJECT_ROOT / "jobs")
    assert found["package"] == str(installed_elsewhere / "parabit")
    assert found["project"] == str(PROJECT_ROOT) and found["config"] == str(PROJECT_ROOT / "jobs/configs/main.yaml")
    assert found["data"] == str(PROJECT_ROOT.parent / "shared" / "data")
    # A Ray Tune trial: Tune moved it into a folder of its own; Ray's working_dir is still on PYTHONPATH.
    found = _probe(installed_elsewhere, tmp_path, PYTHONPATH=str(PROJECT_ROOT))
    assert found["project"] == str(PROJECT_ROOT)
    # The image and the launcher's nodes: PARABIT_PROJECT names it when nothing else does...
    found = _probe(installed_elsewhere, tmp_path, PARABIT_PROJECT=str(PROJECT_ROOT))
    assert found["project"] == str(PROJECT_ROOT)
    # ...but a job that brings its own project (its working dir) uses that one.
    other = tmp_path / "image-project"
    other.mkdir()
    (other / "pyproject.toml").write_text('[project]\nname = "parabit"\n')
    assert _probe(installed_elsewhere, tmp_path, PARABIT_PROJECT=str(other))["project"] == str(other)
    found = _probe(installed_elsewhere, PROJECT_ROOT, PARABIT_PROJECT=str(other))
    assert found["project"] == str(PROJECT_ROOT)


def test_no_project_is_a_clear_error(installed_elsewhere, tmp_path):
    found = _probe(installed_elsewhere, tmp_path)
    assert "project" not in found
    assert "no parabit project found" in found["error"] and "PARABIT_PROJECT" in found["error"]
    assert str(tmp_path) in found["error"] and "--working-dir" in found["error"]
    assert "PARABIT_DATA is not set" in found["data_error"]
    # ...but PARABIT_DATA alone is enough for the data.
    assert _probe(installed_elsewhere, tmp_path, PARABIT_DATA=str(tmp_path))["data"] == str(tmp_path)
    found = _probe(installed_elsewhere, tmp_path, PARABIT_PROJECT=str(tmp_path))
    assert "PARABIT_PROJECT points at" in found["error"] and "not a parabit checkout" in found["error"]


# --- the library opens no file above it unless handed a path (docs/architecture.md) -------------------------------

# The project's folders above the library: configs, entry points and pipelines, search spaces, documents.
ABOVE_THE_LIBRARY = ("jobs/", "pipelines/", "tuning/", "docs/")


def _strings(value):
    """Every string inside ``value`` (configs, mappings, sequences)."""
    from pydantic import BaseModel

    if isinstance(value, str):
        yield value
    elif isinstance(value, Path):
        yield str(value)
    elif isinstance(value, BaseModel):
        yield from _strings(value.model_dump())
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _strings(item)


def _library_defaults():
    """(where, value) of every default the library holds: config fields (and their default factories), parameters of
    its functions and methods, its module-level constants, and the options of its commands."""
    import importlib
    import inspect
    import pkgutil

    import click
    from pydantic import BaseModel
    from pydantic_core import PydanticUndefined

    import parabit

    modules = [importlib.import_module(info.name) for info in pkgutil.walk_packages(parabit.__path__, "parabit.")]
    for module in [parabit, *modules]:
        for name, value in vars(module).items():
            where = f"{module.__name__}.{name}"
            if name.startswith("__") or inspect.ismodule(value):
                continue
            if isinstance(value, click.Command):
                if value.callback.__module__ != module.__name__:
                    continue  # imported from elsewhere: checked where it is defined
                yield from ((f"{where} --{p.name}", p.default) for p in value.params if not callable(p.default))
                value = value.callback
            elif (inspect.isclass(value) or inspect.isfunction(value)) and value.__module__ != module.__name__:
                continue
            if isinstance(value, type) and issubclass(value, BaseModel):
                for field_name, field in value.model_fields.items():
                    default = field.get_default(call_default_factory=True, validated_data={}) \
                        if field.default_factory is not None else field.default
                    if default is not PydanticUndefined:
                        yield f"{where}.{field_name}", default
            if isinstance(value, type):
                members = [(f"{where}.{n}", _function(m)) for n, m in vars(value).items() if _function(m) is not None]
            elif inspect.isfunction(value):
                members = [(where, value)]
            else:  # a module-level constant
                members = []
                yield where, value
            for member_where, function in members:
                for parameter in inspect.signature(function).parameters.values():
                    if parameter.default is not inspect.Parameter.empty:
                        yield f"{member_where}({parameter.name}=)", parameter.default
                yield f"{member_where} (a literal in its code)", _literals(function.__code__)


def _function(member):
    """The function behind a class member (a method, static or class method, property), or None."""
    import functools
    import inspect

    if isinstance(member, (staticmethod, classmethod)):
        member = member.__func__
    elif isinstance(member, property):
        member = member.fget
    elif isinstance(member, functools.cached_property):
        member = member.func
    return member if inspect.isfunction(member) else None


def _literals(code) -> list:
    """The constants of a function's code and of the code nested in it (``project_path("x/y.md")`` has "x/y.md")."""
    found = []
    for constant in code.co_consts:
        found.extend(_literals(constant) if hasattr(constant, "co_consts") else [constant])
    return found


def test_the_library_has_no_default_path_into_the_project_above_it():
    """Configs, documents and search spaces of the checkout are handed in by the caller (the commands of
    ``pipelines/``, the configs of ``jobs/configs/``); the library's own defaults, and the literals in its code, name
    none of them (a message that names one, to say what to run, does not start with it)."""
    defaults = list(_library_defaults())
    assert len(defaults) > 500  # every module was walked
    found = [f"{where} = {text!r}" for where, value in defaults for text in _strings(value)
             if text.removeprefix("./").startswith(ABOVE_THE_LIBRARY)]
    assert found == [], "\n".join(found)
