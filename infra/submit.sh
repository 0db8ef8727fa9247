#!/usr/bin/env bash
# Submit a parabit job to a Ray cluster with the runtime environment of infra/runtime_env.yaml.
#
#   infra/submit.sh [ray job submit options] -- python jobs/train.py --config jobs/configs/bilingual_sentences.yaml
#
# Cluster and stores, from the environment: RAY_ADDRESS (the dashboard, http://HOST:8265), MLFLOW_TRACKING_URI,
# PARABIT_DATA, PARABIT_OUTPUT; for a tracking server that asks for a login, MLflow's MLFLOW_TRACKING_USERNAME and
# MLFLOW_TRACKING_PASSWORD (passed to the job when set, in its runtime env, which anyone holding the cluster's Ray
# token can read: give jobs a login of their own). When a local cluster from infra/local/start.sh is up (same
# PARABIT_CLUSTER_DIR), its cluster.env supplies the first two and this checkout's data and outputs/ folders the
# others: every node of a local cluster shares this machine's disk. Options before `--` go to `ray job submit`
# (e.g. --no-wait, --submission-id NAME, --entrypoint-num-cpus 0).
set -euo pipefail
# shellcheck source=local/lib.sh
source "$(dirname "$0")/local/lib.sh"

if [ -f "$CLUSTER_ENV" ] && [ -z "${RAY_ADDRESS:-}" ]; then
    # shellcheck disable=SC1090
    source "$CLUSTER_ENV"   # RAY_ADDRESS, MLFLOW_TRACKING_URI and the cluster's token settings
    # The local defaults come from parabit itself, so this script cannot disagree with parabit.paths.
    : "${PARABIT_DATA:=$(python -c 'from parabit.paths import data_root; print(data_root())')}"
    : "${PARABIT_OUTPUT:=$PROJECT_ROOT/outputs}"
fi
for name in RAY_ADDRESS MLFLOW_TRACKING_URI PARABIT_DATA PARABIT_OUTPUT; do
    [ -n "${!name:-}" ] || die "$name is not set: start a local cluster (infra/local/start.sh) or export it (see infra/README.md)"
done
export RAY_ADDRESS MLFLOW_TRACKING_URI PARABIT_DATA PARABIT_OUTPUT

# The uploaded working dir has no .git: the job's runs learn their code's commit (MLflow's mlflow.source.git.commit)
# and whether the checkout had uncommitted changes from these (parabit.tracking.lineage), unless already set.
if [ -z "${PARABIT_GIT_COMMIT:-}" ] && PARABIT_GIT_COMMIT="$(git -C "$PROJECT_ROOT" rev-parse HEAD 2>/dev/null)"; then
    PARABIT_GIT_DIRTY=false
    [ -z "$(git -C "$PROJECT_ROOT" status --porcelain --untracked-files=no)" ] || PARABIT_GIT_DIRTY=true
    export PARABIT_GIT_COMMIT PARABIT_GIT_DIRTY
fi

# The YAML with ${VARIABLES} filled in; a variable it names but the shell lacks is an error, not an empty value.
runtime_env="$(mktemp "${TMPDIR:-/tmp}/parabit-runtime-env.XXXXXX")"
log="$(mktemp "${TMPDIR:-/tmp}/parabit-submit-log.XXXXXX")"
trap 'rm -f "$runtime_env" "$log"' EXIT  # one trap for both: a second `trap ... EXIT` would replace the first
python - "$(dirname "$0")/runtime_env.yaml" "$runtime_env" <<'PY'
import os, string, sys
import yaml
source, target = sys.argv[1:]
env = yaml.safe_load(open(source))
try:
    env["env_vars"] = {k: string.Template(str(v)).substitute(os.environ) for k, v in env.get("env_vars", {}).items()}
except KeyError as missing:
    sys.exit(f"submit.sh: {source} uses ${{{missing.args[0]}}}, which is not set")
# The login, only when the submitting shell has one (a server without MLflow's login app needs none), and the
# submitting checkout's commit and dirty flag, when it is a git checkout.
passed = ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD", "PARABIT_GIT_COMMIT", "PARABIT_GIT_DIRTY")
env["env_vars"].update({name: os.environ[name] for name in passed if os.environ.get(name)})
yaml.safe_dump(env, open(target, "w"))
PY

# The working dir and py_modules in the YAML are relative to the checkout.
cd "$PROJECT_ROOT"
# A head that has just started may not have its job agent up yet (Ray waits only 10 s for it and answers "No available
# agent to submit job, please try again later"), so try again a few times before giving up.
for attempt in 1 2 3 4 5 6; do
    if ray job submit --address "$RAY_ADDRESS" --runtime-env "$runtime_env" "$@" 2>&1 | tee "$log"; then
        exit 0
    fi
    grep -q "No available agent" "$log" || exit 1
    echo "submit.sh: the head's job agent is not up yet; retrying in 10 s ($attempt/6)" >&2
    sleep 10
done
exit 1
