#!/usr/bin/env bash
# Idempotent set-up of a parabit checkout: the Debian packages (Apertium for the jobs, Chromium for the test of the
# MLflow UI), the project virtualenv at .venv/, and the locked Python packages. A second run finishes in about a
# second: it only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

# What jobs need (the container image installs the same: infra/docker/Dockerfile): Apertium, and WordNet 3.0's
# database (its morphology, the suffix rules and exception lists that map an inflected form to its lemma, builds the
# BilDRL es-en dictionary).
APT_PACKAGES=(apertium apertium-eng-spa wordnet-base)
# What only the tests need: a headless browser for the MLflow UI test (tests/tracking/test_mlflow_ui.py), and a
# PostgreSQL server for the shared tracking server's tests (tests/infra/test_tracking_server.py).
TEST_APT_PACKAGES=(chromium postgresql)

apertium_ready() {
    local modes
    command -v apertium >/dev/null 2>&1 || return 1
    modes="$(apertium -l 2>/dev/null | tr -d ' ')"
    grep -qx 'spa-eng' <<<"$modes" && grep -qx 'eng-spa' <<<"$modes"
}

# Whether every Debian package named is installed (dpkg's own record, so a half-removed package counts as missing).
installed() {
    local package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || return 1
    done
}

packages_ready() {
    apertium_ready && command -v chromium >/dev/null 2>&1 && installed "${APT_PACKAGES[@]}" "${TEST_APT_PACKAGES[@]}"
}

if ! packages_ready; then
    ALL_APT_PACKAGES=("${APT_PACKAGES[@]}" "${TEST_APT_PACKAGES[@]}")
    echo "setup: installing Debian packages ${ALL_APT_PACKAGES[*]}"
    if [ "$(id -u)" -eq 0 ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${ALL_APT_PACKAGES[@]}" >/dev/null
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo apt-get update -qq
        sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${ALL_APT_PACKAGES[@]}" >/dev/null
    else
        echo "setup: a Debian package is missing and this user cannot install them. Ask an administrator to run:" >&2
        echo "       sudo apt-get update && sudo apt-get install -y ${ALL_APT_PACKAGES[*]}" >&2
        exit 1
    fi
    apertium_ready || { echo "setup: apertium installed but modes spa-eng/eng-spa are missing" >&2; exit 1; }
    command -v chromium >/dev/null 2>&1 || { echo "setup: chromium installed but not on PATH" >&2; exit 1; }
    [ -f /usr/share/wordnet/noun.exc ] || { echo "setup: wordnet-base installed but /usr/share/wordnet/noun.exc is missing" >&2; exit 1; }
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

# The installer of the Python packages (see below), pinned like everything else.
UV_VERSION=0.13.9

# Python that reads `pip config list` on stdin into `settings` (each setting's values, as a list). pip's environment
# variables override its configuration files, as in pip itself.
PIP_SETTINGS='
import ast, os, sys, urllib.parse, urllib.request
settings = {}
for line in sorted(sys.stdin, key=lambda line: line.startswith(":env:")):  # the environment wins
    name, _, value = line.rstrip("\n").partition("=")
    settings[name.rsplit(".", 1)[-1]] = ast.literal_eval(value).split()  # pip prints repr(value)
'

# pip's package sources on this machine (its index, extra indexes, local wheel folders, a machine-wide constraint file)
# as uv options, NUL-separated.
pip_sources() {
    .venv/bin/pip config list | .venv/bin/python -c "$PIP_SETTINGS"'
options = {"index-url": "--index-url", "extra-index-url": "--extra-index-url", "find-links": "--find-links",
           "constraint": "--constraint"}
for setting, option in options.items():
    for value in settings.get(setting, []):
        sys.stdout.write(f"{option}\0{value}\0")'
}

# pip's extra indexes that may hold project $1, space-separated: all but the local (file://) ones without its folder.
extra_indexes_holding() {
    .venv/bin/pip config list | .venv/bin/python -c "$PIP_SETTINGS"'
def may_hold(url, project=sys.argv[1]):
    parsed = urllib.parse.urlparse(url)
    return parsed.scheme != "file" or os.path.isdir(os.path.join(urllib.request.url2pathname(parsed.path), project))
print(" ".join(url for url in settings.get("extra-index-url", []) if may_hold(url)))' "$1"
}

# The stamp records what was installed; it changes only when pyproject.toml or the lock (constraints.txt) changes.
STAMP=.venv/.parabit-installed
WANT="$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && [ -x .venv/bin/python ]; then
    compile_project
    exit 0
fi

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
echo "setup: installing Python packages into .venv (about a minute on a fresh machine)"
# uv installs the packages: it downloads and unpacks them in parallel. A fresh set-up took 68 s instead of 127 s with
# pip, the same packages at the same versions (bench/bench_setup.py, in bench/RESULTS.md). uv does not read pip's
# configuration, so it gets the machine's package sources from pip (this machine's CPU build of torch lies in a local
# wheel folder), and picks the best version across all indexes as pip does. torch==2.13.0 is named explicitly: nothing
# can pull a CUDA build of it. If uv fails, pip installs the same packages.
# pip warns "Location 'file:///…/simple/uv/' is ignored: it is neither a file nor a directory." once for every local
# (file://) extra index without a uv folder: that is how a local index says "not here" (an HTTP index's 404 passes
# silently), not a problem to show on every fresh set-up. So uv comes from pip's own indexes less those
# (PIP_EXTRA_INDEX_URL replaces the configured list; a blank one is an empty list). Nothing is filtered out of pip's
# output, so whatever else it warns about still shows.
UV_INDEXES="$(extra_indexes_holding uv)"
PIP_EXTRA_INDEX_URL="${UV_INDEXES:- }" .venv/bin/pip install --quiet "uv==$UV_VERSION"
mapfile -d '' PIP_SOURCES < <(pip_sources)
if ! .venv/bin/uv pip install --quiet --no-progress --python .venv/bin/python --index-strategy unsafe-best-match \
        "${PIP_SOURCES[@]}" -c constraints.txt torch==2.13.0 -e ".[test,neural,teacher,e5]"; then
    echo "setup: uv could not install the packages; installing them with pip instead (a few minutes)" >&2
    .venv/bin/pip install --quiet --no-compile torch==2.13.0
    .venv/bin/pip install --quiet --no-compile -c constraints.txt -e ".[test,neural,teacher,e5]"
fi
# Bytecode on every core at once. A package's own tests are left out (15% of the code; of the 6,795 modules a job, the
# tests and the server import, none lacked its bytecode), and so are a few files that ship inside packages but are
# not Python 3 (templates, test data): compileall reports them.
.venv/bin/python -m compileall -q -j 0 -x '/tests?/' \
    "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" >/dev/null 2>&1 || true
compile_project
echo "$WANT" > "$STAMP"
echo "setup: done"
