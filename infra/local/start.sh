#!/usr/bin/env bash
# A multi-node Ray cluster on this one machine, plus an MLflow tracking server: a head node (dashboard, job
# server), PARABIT_NUM_WORKERS worker nodes (each its own raylet with one `train_slot`, so a Train worker per node
# can be forced) and `mlflow server`, its store a SQLite file or a PostgreSQL server of its own. Each runs in its own
# process group whose id is kept in $STATE_DIR/*.pid, so stop.sh stops exactly these processes (never `ray stop`,
# which kills every Ray of every user on the machine).
#
#   infra/local/start.sh [--workers N] [--port-base P] [--mlflow-port P] [--state-dir DIR]
#   (same as PARABIT_NUM_WORKERS, PARABIT_PORT_BASE, PARABIT_MLFLOW_PORT, PARABIT_CLUSTER_DIR; see lib.sh). The ports
#   and Ray temp dir are recorded in $STATE_DIR/cluster.conf: later starts and the other scripts use them unasked.
#   --tracking sqlite|postgres   MLflow's backend store (default: what the last start used, else sqlite)
#   --auth | --no-auth           MLflow's basic-auth app on or off (default: as the last start); the first start
#                                with --auth needs the admin's password: MLFLOW_AUTH_ADMIN_PASSWORD or
#                                --admin-password-file FILE (PARABIT_MLFLOW_ADMIN_PASSWORD_FILE); never a default
#   infra/local/start.sh --only worker-N|mlflow|postgres   start that one part again in the running cluster (after a
#                                                 crash, or a fault drill with stop.sh --only NAME --kill)
set -euo pipefail

# Flags are the env vars of lib.sh under other names: parse them before lib.sh derives everything else.
only=""
tracking="${PARABIT_TRACKING:-}"
auth="${PARABIT_MLFLOW_AUTH:-}"
while [ $# -gt 0 ]; do
    case "$1" in
        --workers) export PARABIT_NUM_WORKERS="$2"; shift 2 ;;
        --port-base) export PARABIT_PORT_BASE="$2"; shift 2 ;;
        --mlflow-port) export PARABIT_MLFLOW_PORT="$2"; shift 2 ;;
        --state-dir) export PARABIT_CLUSTER_DIR="$2"; shift 2 ;;
        --tracking) tracking="$2"; shift 2 ;;
        --auth) auth=true; shift ;;
        --no-auth) auth=false; shift ;;
        --admin-password-file) export PARABIT_MLFLOW_ADMIN_PASSWORD_FILE="$2"; shift 2 ;;
        --only) only="$2"; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "start.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

command -v ray >/dev/null || die "no 'ray' in $VENV_BIN: run 'make setup' first (or set PARABIT_VENV_BIN)"
[[ "$NUM_WORKERS" =~ ^[0-9]+$ ]] || die "the number of workers must be a whole number, got '$NUM_WORKERS'"
mkdir -p "$STATE_DIR/logs"
use_cluster_auth

node_ports() {  # node_ports INDEX: node INDEX's ports (each raylet needs its own, or the second one on a machine fails)
    # A node started again takes the next pair of raylet ports: the head retries a dead node's address with a
    # growing back-off for minutes, and a new raylet at that same address failed all of the GCS's health checks
    # (killed as "mistakenly marked dead" 20 s after registering, three starts in a row).
    local starts_file="$STATE_DIR/node-$1.starts" starts=0 pair
    [ -f "$starts_file" ] && starts="$(cat "$starts_file")"
    echo $((starts + 1)) >"$starts_file"
    pair=$((10 + 2 * (starts % 10)))
    echo "--node-manager-port=$(node_port "$1" "$pair")" "--object-manager-port=$(node_port "$1" $((pair + 1)))" \
        "--dashboard-agent-listen-port=$(node_port "$1" 0)" "--dashboard-agent-grpc-port=$(node_port "$1" 1)" \
        "--metrics-export-port=$(node_port "$1" 2)" "--runtime-env-agent-port=$(node_port "$1" 3)" \
        "--min-worker-port=$(node_port "$1" 30)" "--max-worker-port=$(node_port "$1" 99)"
}
node_args() {  # what every node gets: its ports, its own temp dir, a small object store, no GPUs
    node_ports "$1"
    echo --block --disable-usage-stats "--temp-dir=$(node_temp_dir "$1")" "--object-store-memory=$OBJECT_STORE_BYTES" \
        --node-ip-address=127.0.0.1 --num-gpus=0
}
GCS_ADDRESS="127.0.0.1:$GCS_PORT"
# The environment of every `ray start`, inherited by its workers. RAY_ADDRESS: processes that call ray.init() or
# the state API without an address (Ray Train's PlacementGroupCleaner does) would otherwise find every Ray on the
# machine and fail with "Found multiple active Ray instances". No drain on SIGTERM: it exists for Ray Serve
# replicas, and it made stop.sh wait 30 s per node. Each node's log monitor lists its log folder twice a second, not
# 10 times (as a local Ray of parabit.ray_runtime: half its CPU once a node has started ~200 workers).
# The head's autoscaler and dashboard metrics servers follow the port base (Ray fixes them at 44217 and 44227, where
# a second cluster on the machine failed with "Address already in use").
ray_env=(env "RAY_ADDRESS=$GCS_ADDRESS" RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S=0 RAY_LOG_MONITOR_MANY_FILES_THRESHOLD=0
         "AUTOSCALER_METRIC_PORT=$AUTOSCALER_METRICS_PORT" "DASHBOARD_METRIC_PORT=$DASHBOARD_METRICS_PORT")

# The tracking settings of this start: the flags, else those the last start recorded (a second start reuses its store).
read_tracking_conf
TRACKING="${tracking:-$TRACKING}"
AUTH="${auth:-$AUTH}"
[[ "$TRACKING" =~ ^(sqlite|postgres)$ ]] || die "--tracking takes sqlite or postgres, got '$TRACKING'"
[[ "$AUTH" =~ ^(true|false)$ ]] || die "PARABIT_MLFLOW_AUTH must be true or false, got '$AUTH'"

secret_file() {  # secret_file PATH: make PATH (once) holding a random secret, readable by this user only
    [ -s "$1" ] || (umask 077 && python -c 'import secrets; print(secrets.token_hex(24))' >"$1")
}

write_auth_ini() {  # MLflow's basic-auth settings for this start (MLFLOW_AUTH_CONFIG_PATH)
    local database="sqlite:///$STATE_DIR/basic_auth.db"
    [ "$TRACKING" = sqlite ] || database="$MLFLOW_AUTH_DB_POSTGRES"
    # A user with no role can do nothing (workspaces are on, see start_mlflow); the roles reader and editor of
    # tracking-user.sh grant READ or EDIT on every experiment and registered model. The admin's password is not here.
    cat >"$MLFLOW_AUTH_INI" <<INI
[mlflow]
default_permission = READ
database_uri = $database
admin_username = $MLFLOW_ADMIN_USER
authorization_function = mlflow.server.auth:authenticate_request_basic_auth
grant_default_workspace_access = false
INI
}

mlflow_store_uri() {  # the MLflow server's backend store
    if [ "$TRACKING" = sqlite ]; then echo "sqlite:///$STATE_DIR/mlflow.db"; else echo "$MLFLOW_STORE_URI_POSTGRES"; fi
}

start_mlflow() {
    local store auth_args=() auth_env=()
    store="$(mlflow_store_uri)"
    if [ "$AUTH" = true ]; then
        # MLflow's login app. With workspaces on (every run stays in the one `default` workspace) creating an
        # experiment or a registered model needs a workspace grant: without them any logged-in user, even one with
        # READ only, could create both (measured with MLflow 3.17.2).
        auth_args=(--app-name basic-auth --enable-workspaces)
        write_auth_ini
        secret_file "$MLFLOW_SECRET_KEY_FILE"
        local admin_password="${MLFLOW_AUTH_ADMIN_PASSWORD:-}"
        if [ -n "${PARABIT_MLFLOW_ADMIN_PASSWORD_FILE:-}" ]; then
            [ -s "$PARABIT_MLFLOW_ADMIN_PASSWORD_FILE" ] ||
                die "--admin-password-file $PARABIT_MLFLOW_ADMIN_PASSWORD_FILE: no such file, or it is empty"
            admin_password="$(head -n 1 "$PARABIT_MLFLOW_ADMIN_PASSWORD_FILE")"
        fi
        [ -n "$admin_password" ] || mlflow_admin_exists || die "--auth: the first start creates MLflow's \
admin user '$MLFLOW_ADMIN_USER' and needs its password: set MLFLOW_AUTH_ADMIN_PASSWORD or pass \
--admin-password-file FILE"
        # Only with the login app: MLflow's server reads its auth settings on some requests (runs/search) whenever
        # the `auth` extra is installed, and a MLFLOW_AUTH_CONFIG_PATH naming no file fails them all (HTTP 500).
        auth_env=(MLFLOW_AUTH_CONFIG_PATH="$MLFLOW_AUTH_INI" MLFLOW_AUTH_ADMIN_PASSWORD="$admin_password"
                  MLFLOW_FLASK_SERVER_SECRET_KEY="$(cat "$MLFLOW_SECRET_KEY_FILE")")
    fi
    log "starting the MLflow server at $MLFLOW_URL (store $store, artifacts $STATE_DIR/mlartifacts, login $AUTH)"
    # One worker and no job runner: ~0.5 GB and ~10 s to healthy instead of ~1.1 GB and ~16 s. Artifacts are
    # proxied by the server: jobs on any node upload over HTTP. Secrets reach the server through its environment
    # only (never its command line, which `ps` shows to every user).
    (
        export PGPASSFILE="$POSTGRES_PASSFILE" MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false
        [ "${#auth_env[@]}" -eq 0 ] || export "${auth_env[@]}"
        spawn mlflow "$STATE_DIR/logs/mlflow.log" mlflow server "${auth_args[@]}" \
            --backend-store-uri "$store" --artifacts-destination "$STATE_DIR/mlartifacts" --serve-artifacts \
            --host 127.0.0.1 --port "$MLFLOW_PORT" --workers 1
    )
}

mlflow_admin_exists() {  # whether the login store already has its admin (MLflow creates it on the first start)
    local sql="SELECT count(*) FROM users WHERE username = '$MLFLOW_ADMIN_USER'"
    if [ "$TRACKING" = postgres ]; then
        [ "$(psql_query mlflow_auth "$sql" 2>/dev/null)" = 1 ]
    else
        [ "$(python -c 'import sqlite3, sys
print(sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True).execute(sys.argv[2]).fetchone()[0])' \
            "$STATE_DIR/basic_auth.db" "$sql" 2>/dev/null)" = 1 ]
    fi
}

mlflow_healthy() {
    wait_http "$MLFLOW_URL/health" "the MLflow server" "$STATE_DIR/mlflow.pid" "$STATE_DIR/logs/mlflow.log" ||
        exited_during_start "the MLflow server" "$STATE_DIR/logs/mlflow.log"
}

alive_nodes() {  # alive_nodes [NAME]: how many raylets of this cluster (labelled parabit-node=NAME) the head sees alive
    http_get "$DASHBOARD_URL/nodes?view=summary" | python -c '
import json, sys
nodes = json.load(sys.stdin)["data"]["summary"]
print(sum(n["raylet"]["state"] == "ALIVE" and sys.argv[1] in ("", n["raylet"].get("labels", {}).get("parabit-node"))
          for n in nodes))' "${1:-}"
}

start_head() {
    # shellcheck disable=SC2046  # node_args is a list of words on purpose
    spawn head "$STATE_DIR/logs/head.log" "${ray_env[@]}" ray start --head $(node_args 0) \
        --port="$GCS_PORT" --ray-client-server-port="$CLIENT_PORT" \
        --include-dashboard=true --dashboard-host=127.0.0.1 --dashboard-port="$DASHBOARD_PORT" \
        --num-cpus="$HEAD_CPUS" --labels="parabit-node=head"
}

start_worker() {  # start_worker INDEX
    # shellcheck disable=SC2046
    spawn "worker-$1" "$STATE_DIR/logs/worker-$1.log" "${ray_env[@]}" ray start $(node_args "$1") \
        --address="$GCS_ADDRESS" --num-cpus="$WORKER_CPUS" \
        --resources='{"train_slot": 1}' --labels="parabit-node=worker-$1"
}

registered() {  # registered NAME NODES: wait until the head sees NODES raylets alive; 3 if NAME's process exited
    local pid deadline=$((SECONDS + START_TIMEOUT))
    pid="$(cat "$STATE_DIR/$1.pid")"
    until [ "$(alive_nodes 2>/dev/null)" = "$2" ]; do
        # The leader itself first: until it has called setsid (late on a busy machine) its group is still empty.
        pid_alive "$pid" || group_alive "$pid" || return 3
        ((SECONDS < deadline)) || die "$1 did not register with the head in ${START_TIMEOUT}s (logs: $STATE_DIR/logs)"
        sleep 1
    done
}

start_node() {  # start_node NAME NODES START_COMMAND...: start it, again if it exits before NODES raylets are alive
    local name="$1" nodes="$2" attempt
    shift 2
    for attempt in $(seq 1 "$NODE_START_ATTEMPTS"); do
        "$@"
        # The head's dashboard answers first; its own raylet registers after (or `ray start` gives up on it).
        if [ "$name" = head ] && ! wait_http "$DASHBOARD_URL/api/version" "the Ray head" "$STATE_DIR/head.pid" \
            "$STATE_DIR/logs/head.log"; then
            :  # exited: start it again
        elif registered "$name" "$nodes"; then
            return 0
        fi
        ((attempt < NODE_START_ATTEMPTS)) || exited_during_start "$name ($attempt attempts)" "$STATE_DIR/logs/$name.log"
        stop_group "$name"  # what the failed start left behind (a GCS holding the ports)
        log "$name exited during start-up (Ray's own start-up waits expire on a busy machine): attempt $((attempt + 1))"
    done
}

if [ -n "$only" ]; then  # one part of a running cluster, started again
    [ -f "$STATE_DIR/head.pid" ] && group_alive "$(cat "$STATE_DIR/head.pid")" ||
        die "--only $only: no cluster is running from $STATE_DIR (start it without --only)"
    [ -f "$STATE_DIR/$only.pid" ] && group_alive "$(cat "$STATE_DIR/$only.pid")" && die "--only $only: it is running"
    read_tracking_conf  # the parts of the running cluster, as it was started
    case "$only" in
        mlflow) start_mlflow; mlflow_healthy ;;
        postgres)
            [ "$TRACKING" = postgres ] || die "--only postgres: this cluster's MLflow store is $TRACKING"
            start_postgres ;;
        worker-*)
            index="${only#worker-}"
            [[ "$index" =~ ^[1-9][0-9]*$ ]] || die "--only $only: a worker node is worker-1, worker-2, ..."
            for attempt in $(seq 1 "$NODE_START_ATTEMPTS"); do
                # The head declares a lost node dead only after missing its heartbeats for a while; until then the
                # count of alive nodes that start_node waits for would be off by one.
                deadline=$((SECONDS + START_TIMEOUT))
                until [ "$(alive_nodes "$only")" = 0 ]; do
                    ((SECONDS < deadline)) || die "--only $only: the head still sees the old $only alive"
                    sleep 1
                done
                log "starting worker node $index again: $WORKER_CPUS CPU(s), resource train_slot=1"
                start_node "$only" "$(($(alive_nodes) + 1))" start_worker "$index"
                # Seen once under load: a node started again in place exited ~17 s after registering. It counts as
                # up once it has outlived the head's first health checks (~5 s delay, then every 3 s).
                settled=$((SECONDS + 25))
                while ((SECONDS < settled)) && group_alive "$(cat "$STATE_DIR/$only.pid")"; do sleep 1; done
                group_alive "$(cat "$STATE_DIR/$only.pid")" && break
                ((attempt < NODE_START_ATTEMPTS)) ||
                    exited_during_start "$only ($attempt attempts)" "$STATE_DIR/logs/$only.log"
                log "$only exited soon after it registered: attempt $((attempt + 1))"
            done ;;
        *) die "--only takes worker-N, mlflow or postgres, got '$only'" ;;
    esac
    log "$only is up again"
    exit 0
fi

# Idempotent: a cluster already running from this state dir is reported, not started twice.
if [ -f "$STATE_DIR/head.pid" ] && group_alive "$(cat "$STATE_DIR/head.pid")"; then
    running_base="$(recorded PORT_BASE)"
    [ -z "$running_base" ] || [ "$PORT_BASE" = "$running_base" ] || die "the cluster of $STATE_DIR runs with port \
base $running_base, not $PORT_BASE: stop it first (infra/local/stop.sh --state-dir $STATE_DIR)"
    log "already running (state in $STATE_DIR); stop it with infra/local/stop.sh"
    cat "$CLUSTER_ENV"
    exit 0
fi
# Leftovers of a cluster that died without stop.sh: clear them so the new one starts clean.
"$INFRA_LOCAL_DIR/stop.sh" --quiet
rm -f "$STATE_DIR"/node-*.starts  # a new head holds no dead node's address: each node's ports start from the first pair
# This start's settings, before anything is started: what every later script (stop.sh first) takes as this cluster's.
cat >"$CLUSTER_CONF" <<CONF
# Written by infra/local/start.sh at each start: where the cluster started from this state dir listens and keeps
# Ray's session files. Every script of infra/local takes these as its defaults (lib.sh); stop.sh always.
PORT_BASE=$PORT_BASE
MLFLOW_PORT=$MLFLOW_PORT
POSTGRES_PORT=$POSTGRES_PORT
RAY_TEMP_DIR=$RAY_TEMP_DIR
CONF

# If anything below fails, take down what was already started instead of leaving half a cluster behind.
trap 'status=$?; if [ $status -ne 0 ]; then log "start-up failed: stopping what was started"; "$INFRA_LOCAL_DIR/stop.sh" --quiet; fi' EXIT

if [ "$RAY_AUTH_MODE" = token ] && [ ! -s "$RAY_AUTH_TOKEN_PATH" ]; then
    (umask 077 && python -c 'import secrets; print(secrets.token_hex(32))' >"$RAY_AUTH_TOKEN_PATH")
fi

# The tracking store and server first, so MLflow comes up while the Ray nodes do.
printf 'TRACKING=%s\nAUTH=%s\n' "$TRACKING" "$AUTH" >"$TRACKING_CONF"
[ "$TRACKING" = sqlite ] || start_postgres
start_mlflow
# On PostgreSQL, MLflow starts up (and on the first start creates its schema: 70-90 s on 2 cores under other load)
# before the Ray nodes do: beside it, the head missed Ray's fixed 30 s wait for its raylet in all three attempts, twice.
[ "$TRACKING" = sqlite ] || mlflow_healthy
log "starting the Ray head: GCS 127.0.0.1:$GCS_PORT, dashboard $DASHBOARD_URL, $HEAD_CPUS CPU(s)"
start_node head 1 start_head

# One worker node at a time: the machine has two cores, and each raylet needs a few seconds of CPU to register.
for i in $(seq 1 "$NUM_WORKERS"); do
    log "starting worker node $i: $WORKER_CPUS CPU(s), resource train_slot=1, label parabit-node=worker-$i"
    start_node "worker-$i" "$((i + 1))" start_worker "$i"
done

mlflow_healthy

cat >"$CLUSTER_ENV" <<ENV
# Written by infra/local/start.sh: \`source\` it to point ray CLI / parabit jobs at this cluster.
export RAY_ADDRESS=$DASHBOARD_URL
export RAY_AUTH_MODE=$RAY_AUTH_MODE
export RAY_AUTH_TOKEN_PATH=$RAY_AUTH_TOKEN_PATH
export MLFLOW_TRACKING_URI=$MLFLOW_URL
# For infra/local's scripts (stop.sh, tracking-user.sh, backup.sh): this cluster, its settings in $CLUSTER_CONF.
export PARABIT_CLUSTER_DIR=$STATE_DIR
# The MLflow server's own store (for \`mlflow ui\` with the server stopped, or psql with PGPASSFILE=$POSTGRES_PASSFILE).
export PARABIT_MLFLOW_STORE=$(mlflow_store_uri)
ENV
if [ "$AUTH" = true ]; then
    echo "# MLflow asks for a login: export MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD (a user of" \
        "infra/local/tracking-user.sh)" >>"$CLUSTER_ENV"
fi
log "up: $((NUM_WORKERS + 1)) Ray node(s), dashboard $DASHBOARD_URL, MLflow $MLFLOW_URL ($TRACKING store, login \
$AUTH); state in $STATE_DIR"
cat "$CLUSTER_ENV"
