#!/usr/bin/env bash
# A multi-node Ray cluster on this one machine, plus an MLflow tracking server: a head node (dashboard, job
# server), PARABIT_NUM_WORKERS worker nodes (each its own raylet with one `train_slot`, so a Train worker per node
# can be forced) and `mlflow server`. Each runs in its own process group whose id is kept in $STATE_DIR/*.pid,
# so stop.sh stops exactly these processes (never `ray stop`, which kills every Ray of every user on the machine).
#
#   infra/local/start.sh [--workers N] [--port-base P] [--mlflow-port P] [--state-dir DIR]
#   (same as PARABIT_NUM_WORKERS, PARABIT_PORT_BASE, PARABIT_MLFLOW_PORT, PARABIT_CLUSTER_DIR; see lib.sh)
set -euo pipefail

# Flags are the env vars of lib.sh under other names: parse them before lib.sh derives everything else.
while [ $# -gt 0 ]; do
    case "$1" in
        --workers) export PARABIT_NUM_WORKERS="$2"; shift 2 ;;
        --port-base) export PARABIT_PORT_BASE="$2"; shift 2 ;;
        --mlflow-port) export PARABIT_MLFLOW_PORT="$2"; shift 2 ;;
        --state-dir) export PARABIT_CLUSTER_DIR="$2"; shift 2 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "start.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

command -v ray >/dev/null || die "no 'ray' in $VENV_BIN: run 'make setup' first (or set PARABIT_VENV_BIN)"
[[ "$NUM_WORKERS" =~ ^[0-9]+$ ]] || die "the number of workers must be a whole number, got '$NUM_WORKERS'"
mkdir -p "$STATE_DIR/logs"

# Idempotent: a cluster already running from this state dir is reported, not started twice.
if [ -f "$STATE_DIR/head.pid" ] && group_alive "$(cat "$STATE_DIR/head.pid")"; then
    log "already running (state in $STATE_DIR); stop it with infra/local/stop.sh"
    cat "$CLUSTER_ENV"
    exit 0
fi
# Leftovers of a cluster that died without stop.sh: clear them so the new one starts clean.
"$INFRA_LOCAL_DIR/stop.sh" --quiet

# If anything below fails, take down what was already started instead of leaving half a cluster behind.
trap 'status=$?; if [ $status -ne 0 ]; then log "start-up failed: stopping what was started"; "$INFRA_LOCAL_DIR/stop.sh" --quiet; fi' EXIT

if [ "$RAY_AUTH_MODE" = token ] && [ ! -s "$RAY_AUTH_TOKEN_PATH" ]; then
    (umask 077 && python -c 'import secrets; print(secrets.token_hex(32))' >"$RAY_AUTH_TOKEN_PATH")
fi

node_ports() {  # the per-node ports of node $1: each raylet needs its own, or the second one on a machine fails
    echo "--node-manager-port=$(node_port "$1" 0)" "--object-manager-port=$(node_port "$1" 1)" \
        "--dashboard-agent-listen-port=$(node_port "$1" 2)" "--dashboard-agent-grpc-port=$(node_port "$1" 3)" \
        "--metrics-export-port=$(node_port "$1" 4)" "--runtime-env-agent-port=$(node_port "$1" 5)" \
        "--min-worker-port=$(node_port "$1" 10)" "--max-worker-port=$(node_port "$1" 99)"
}
common=(--block --disable-usage-stats "--temp-dir=$RAY_TEMP_DIR" "--object-store-memory=$OBJECT_STORE_BYTES")

log "starting the Ray head: GCS 127.0.0.1:$GCS_PORT, dashboard $DASHBOARD_URL, $HEAD_CPUS CPU(s)"
# shellcheck disable=SC2046  # node_ports is a list of words on purpose
spawn head "$STATE_DIR/logs/head.log" ray start --head "${common[@]}" --node-ip-address=127.0.0.1 \
    --port="$GCS_PORT" --ray-client-server-port="$CLIENT_PORT" \
    --include-dashboard=true --dashboard-host=127.0.0.1 --dashboard-port="$DASHBOARD_PORT" \
    --num-cpus="$HEAD_CPUS" --num-gpus=0 --labels="parabit-node=head" $(node_ports 0)
wait_http "$DASHBOARD_URL/api/version" "the Ray head" "$STATE_DIR/head.pid" "$STATE_DIR/logs/head.log"

for i in $(seq 1 "$NUM_WORKERS"); do
    log "starting worker node $i: $WORKER_CPUS CPU(s), resource train_slot=1, label parabit-node=worker-$i"
    # shellcheck disable=SC2046
    spawn "worker-$i" "$STATE_DIR/logs/worker-$i.log" ray start "${common[@]}" --node-ip-address=127.0.0.1 \
        --address="127.0.0.1:$GCS_PORT" --num-cpus="$WORKER_CPUS" --num-gpus=0 \
        --resources='{"train_slot": 1}' --labels="parabit-node=worker-$i" $(node_ports "$i")
done

log "starting the MLflow server at $MLFLOW_URL (store $STATE_DIR/mlflow.db, artifacts $STATE_DIR/mlartifacts)"
# One gunicorn worker and no job runner: ~0.5 GB and ~10 s to healthy instead of ~1.1 GB and ~16 s.
MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false spawn mlflow "$STATE_DIR/logs/mlflow.log" mlflow server \
    --backend-store-uri "sqlite:///$STATE_DIR/mlflow.db" --artifacts-destination "$STATE_DIR/mlartifacts" \
    --host 127.0.0.1 --port "$MLFLOW_PORT" --workers 1

# Healthy means: every worker raylet registered with the head, and MLflow answering.
deadline=$((SECONDS + START_TIMEOUT))
want=$((NUM_WORKERS + 1))
until [ "$(curl -fsS --max-time 5 -H "Authorization: Bearer $(cat "$RAY_AUTH_TOKEN_PATH" 2>/dev/null)" \
        "$DASHBOARD_URL/nodes?view=summary" | python -c \
        'import json,sys; print(sum(n["raylet"]["state"] == "ALIVE" for n in json.load(sys.stdin)["data"]["summary"]))' \
        2>/dev/null)" = "$want" ]; do
    for i in $(seq 1 "$NUM_WORKERS"); do
        group_alive "$(cat "$STATE_DIR/worker-$i.pid")" || { tail -n 30 "$STATE_DIR/logs/worker-$i.log" >&2; die "worker node $i exited during start-up"; }
    done
    ((SECONDS < deadline)) || die "only some of the $want Ray nodes registered after ${START_TIMEOUT}s (logs: $STATE_DIR/logs)"
    sleep 1
done
wait_http "$MLFLOW_URL/health" "the MLflow server" "$STATE_DIR/mlflow.pid" "$STATE_DIR/logs/mlflow.log"

cat >"$CLUSTER_ENV" <<ENV
# Written by infra/local/start.sh: \`source\` it to point ray CLI / parabit jobs at this cluster.
export RAY_ADDRESS=$DASHBOARD_URL
export RAY_AUTH_MODE=$RAY_AUTH_MODE
export RAY_AUTH_TOKEN_PATH=$RAY_AUTH_TOKEN_PATH
export MLFLOW_TRACKING_URI=$MLFLOW_URL
ENV
log "up: $want Ray node(s), dashboard $DASHBOARD_URL, MLflow $MLFLOW_URL; state in $STATE_DIR"
cat "$CLUSTER_ENV"
