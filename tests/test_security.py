"""Security defaults that a careless edit could undo, checked in the source (AST) and in the shipped set-ups."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from parabit.paths import PROJECT_ROOT

SOURCE_DIRS = ("platform/parabit", "jobs", "tuning", "pipelines", "bench", "infra", "scripts")
PICKLE_MODULES = {"pickle", "cloudpickle", "dill", "joblib", "marshal", "shelve"}
SHELLS = {"sh", "bash", "zsh", "dash", "/bin/sh", "/bin/bash"}


def _name(node: ast.AST) -> str:
    """``a.b.c`` for a call's function, as far as it is made of names."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return "?"


def _keyword(call: ast.Call, name: str) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def violations(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        root, _, attr = name.rpartition(".")
        shell = _keyword(node, "shell")
        if isinstance(shell, ast.Constant) and shell.value is True:
            found.append((node.lineno, f"{name}(shell=True): pass an argument list, without a shell"))
        if name in ("eval", "exec"):
            found.append((node.lineno, f"{name}(): never evaluate text"))
        if name in ("os.system", "os.popen"):
            found.append((node.lineno, f"{name}(): runs a shell; use subprocess with an argument list"))
        if root.split(".")[-1] in PICKLE_MODULES and attr in ("load", "loads", "Unpickler", "open"):
            found.append((node.lineno, f"{name}(): no unpickling; store JSON, parquet or a state dict"))
        if name == "torch.load":
            weights_only = _keyword(node, "weights_only")
            if not (isinstance(weights_only, ast.Constant) and weights_only.value is True):
                found.append((node.lineno, "torch.load without weights_only=True"))
        if name in ("yaml.load", "yaml.unsafe_load", "yaml.full_load"):
            found.append((node.lineno, f"{name}(): use yaml.safe_load"))
        if node.args and isinstance(node.args[0], (ast.List, ast.Tuple)):
            words = [e.value for e in node.args[0].elts[:2] if isinstance(e, ast.Constant)]
            if len(words) == 2 and words[0] in SHELLS and words[1] == "-c":
                found.append((node.lineno, f"{name}([{words[0]!r}, '-c', ...]): a shell by another name"))
    return found


def test_the_checker_catches_each_pattern():
    bad = """
import subprocess, pickle, torch, yaml, os
subprocess.run("ls", shell=True)
eval("1")
pickle.loads(b"")
torch.load("x.pt")
torch.load("x.pt", weights_only=False)
yaml.load("a: 1")
os.system("ls")
subprocess.Popen(["bash", "-c", "ls"])
model.eval()
torch.load("x.pt", weights_only=True)
subprocess.run(["ls", "-l"])
"""
    assert [line for line, _ in violations(ast.parse(bad))] == [3, 4, 5, 6, 7, 8, 9, 10]


def test_no_shell_pickle_eval_or_unsafe_load_in_the_source():
    files = [p for d in SOURCE_DIRS for p in sorted((PROJECT_ROOT / d).rglob("*.py"))]
    assert len(files) > 50
    problems = [f"{path.relative_to(PROJECT_ROOT)}:{line}: {what}"
                for path in files for line, what in violations(ast.parse(path.read_text(), str(path)))]
    assert not problems, "\n".join(problems)


LOCAL_SETUPS = ["infra/local/start.sh", "platform/parabit/ray_runtime.py", "README.md"]


@pytest.mark.parametrize("path", LOCAL_SETUPS)
def test_local_services_listen_on_127_0_0_1_only(path):
    """The MLflow server/UI and the Ray dashboard started on this machine bind to the loopback interface."""
    text = (PROJECT_ROOT / path).read_text()
    hosts = re.findall(r"(?:--host[= ]|--dashboard-host[= ]|dashboard_host=)[\"']?([^\"'\s]+)", text)
    assert hosts, f"{path} starts no service?"
    assert set(hosts) <= {"127.0.0.1", "$MLFLOW_HOST", "${MLFLOW_HOST}"}, hosts
