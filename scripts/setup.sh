#!/usr/bin/env bash
# Idempotent set-up of a parabit checkout: the Debian packages (Apertium for the jobs, Chromium for the test of the
# MLflow UI), the project virtualenv at .venv/, and the locked Python packages. A second run finishes in about a
# second: it only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

# What jobs need (the container image installs the same: infra/docker/Dockerfile).
APT_PACKAGES=(apertium apertium-eng-spa)
# What only the tests need: a headless browser for the MLflow UI test (tests/tracking/test_mlflow_ui.py).
TEST_APT_PACKAGES=(chromium)

apertium_ready() {
    local modes
    command -v apertium >/dev/null 2>&1 || return 1
    modes="$(apertium -l 2>/dev/null | tr -d ' ')"
    grep -qx 'spa-eng' <<<"$modes" && grep -qx 'eng-spa' <<<"$modes"
}

chromium_ready() {
    command -v chromium >/dev/null 2>&1
}

if ! apertium_ready || ! chromium_ready; then
    ALL_APT_PACKAGES=("${APT_PACKAGES[@]}" "${TEST_APT_PACKAGES[@]}")
    echo "setup: installing Debian packages ${ALL_APT_PACKAGES[*]}"
    if [ "$(id -u)" -eq 0 ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${ALL_APT_PACKAGES[@]}" >/dev/null
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo apt-get update -qq
        sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${ALL_APT_PACKAGES[@]}" >/dev/null
    else
        echo "setup: Apertium or Chromium is missing and this user cannot install them. Ask an administrator to run:" >&2
        echo "       sudo apt-get update && sudo apt-get install -y ${ALL_APT_PACKAGES[*]}" >&2
        exit 1
    fi
    apertium_ready || { echo "setup: apertium installed but modes spa-eng/eng-spa are missing" >&2; exit 1; }
    chromium_ready || { echo "setup: chromium installed but not on PATH" >&2; exit 1; }
fi

PYTHON="${PARABIT_PYTHON:-}"
if [ -z "$PYTHON" ]; then
    for candidate in python3.11 python3; do
        if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
            PYTHON="$candidate"; break
        fi
    done
fi
[ -n "$PYTHON" ] || { echo "setup: parabit needs Python 3.11 (set PARABIT_PYTHON to its path)" >&2; exit 1; }

# The project's own modules compiled to bytecode, every time (~1 s when nothing changed). Python writes no bytecode
# where PYTHONDONTWRITEBYTECODE is set (as on this project's CI machines) but still reads it; without it every
# process that imports parabit (each Ray worker, each job) compiled ~18,000 lines again: ~0.4 s a process.
compile_project() {
    .venv/bin/python -m compileall -q -j 0 platform pipelines tuning jobs >/dev/null
}

# The stamp records what was installed; it changes only when pyproject.toml or the lock (constraints.txt) changes.
STAMP=.venv/.parabit-installed
WANT="$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && [ -x .venv/bin/python ]; then
    compile_project
    exit 0
fi

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
echo "setup: installing Python packages into .venv (a few minutes on a fresh machine)"
# torch first and exactly: with it in place, nothing else can pull a CUDA build of it. Then the project (editable)
# with its test and neural extras, every package at the version of the lock. pip compiles bytecode one file at a time;
# compileall on every core afterwards is faster (set-up 150 s -> 124 s on 2 cores). A few files that ship inside
# packages are not Python 3 (templates, test data); compileall reports them and Python never imports them.
.venv/bin/pip install --quiet --no-compile torch==2.13.0
.venv/bin/pip install --quiet --no-compile -c constraints.txt -e ".[test,neural,teacher]"
.venv/bin/python -m compileall -q -j 0 "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" \
    >/dev/null 2>&1 || true
compile_project
echo "$WANT" > "$STAMP"
echo "setup: done"
