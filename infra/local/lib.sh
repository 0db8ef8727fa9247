# Shared by the scripts of this folder and ../submit.sh (sourced, never run): the one place that decides where a local
# cluster keeps its state, which ports its nodes use and how its processes are started and stopped.
# shellcheck shell=bash

INFRA_LOCAL_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PROJECT_ROOT="$(cd "$INFRA_LOCAL_DIR/../.." && pwd)"

# Everything a cluster writes (pid files, logs, the MLflow store and artifacts, the auth token) lives here.
# outputs/ is already git-ignored and excluded from `ray job submit` uploads.
# Default: local-cluster/ in the jobs' outputs folder, $PARABIT_OUTPUT (this checkout's outputs/ when unset).
STATE_DIR="${PARABIT_CLUSTER_DIR:-${PARABIT_OUTPUT:-$PROJECT_ROOT/outputs}/local-cluster}"
# What start.sh recorded of the cluster it started from this state dir: its ports and its Ray temp dir. They are
# every script's defaults from then on (stop.sh, tracking-user.sh, submit.sh, a second start), so a cluster started
# with --port-base is reached and stopped without the flag being repeated. A port base given again (flag or variable)
# wins; then the other recorded ports, derived from the old base, do not apply.
CLUSTER_CONF="$STATE_DIR/cluster.conf"
recorded() {  # recorded NAME: NAME's value in CLUSTER_CONF, empty if none
    [ ! -f "$CLUSTER_CONF" ] || sed -n "s/^$1=//p" "$CLUSTER_CONF"
}
setting() {  # setting VALUE NAME DEFAULT: VALUE if set, else NAME as recorded for this port base, else DEFAULT
    local value="$1"
    [ -n "$value" ] || [ "$PORT_BASE" != "$(recorded PORT_BASE)" ] || value="$(recorded "$2")"
    echo "${value:-$3}"
}
NUM_WORKERS="${PARABIT_NUM_WORKERS:-2}"
HEAD_CPUS="${PARABIT_HEAD_CPUS:-1}"
WORKER_CPUS="${PARABIT_WORKER_CPUS:-1}"
# Two cores and a few GiB per user here: Ray's default (30% of memory per node) would reserve far too much.
OBJECT_STORE_BYTES="${PARABIT_OBJECT_STORE_BYTES:-268435456}"
# Ports: the head's GCS at BASE, its dashboard at BASE+1, its client server at BASE+2, MLflow BASE+3, PostgreSQL
# BASE+4, the head's autoscaler and dashboard metrics BASE+5 and BASE+6; node i (0 = head) gets a block of 100 ports
# at BASE+100*(i+1): its agents at offsets 0-3, its raylet at a pair in 10-29 (the next pair each time the node is
# started again, see start.sh), its Ray workers at 30-99. Distinct blocks are what let several raylets share one
# machine. Nothing is fixed, so two clusters with different bases never meet.
PORT_BASE="${PARABIT_PORT_BASE:-$(recorded PORT_BASE)}"
PORT_BASE="${PORT_BASE:-26300}"
[[ "$PORT_BASE" =~ ^[1-9][0-9]*$ ]] || { echo "[parabit-cluster] ERROR: the port base must be a number, got \
'$PORT_BASE'" >&2; exit 1; }
MLFLOW_PORT="$(setting "${PARABIT_MLFLOW_PORT:-}" MLFLOW_PORT $((PORT_BASE + 3)))"
GCS_PORT="$PORT_BASE"
DASHBOARD_PORT="$((PORT_BASE + 1))"
CLIENT_PORT="$((PORT_BASE + 2))"
AUTOSCALER_METRICS_PORT="$((PORT_BASE + 5))"
DASHBOARD_METRICS_PORT="$((PORT_BASE + 6))"
DASHBOARD_URL="http://127.0.0.1:$DASHBOARD_PORT"
MLFLOW_URL="http://127.0.0.1:$MLFLOW_PORT"
START_TIMEOUT="${PARABIT_START_TIMEOUT:-300}"  # generous: a loaded 2-core machine can take minutes
STOP_TIMEOUT="${PARABIT_STOP_TIMEOUT:-30}"

# The MLflow server's backend store: `sqlite` (the file $STATE_DIR/mlflow.db) or `postgres` (a PostgreSQL server of
# this cluster, data in $STATE_DIR/postgres/data, on 127.0.0.1:POSTGRES_PORT only), and whether MLflow's basic-auth
# app asks for a login. start.sh records the choice in TRACKING_CONF, so a second start (and `--only mlflow`) uses the
# same store without the flags being repeated.
TRACKING_CONF="$STATE_DIR/tracking.conf"
POSTGRES_PORT="$(setting "${PARABIT_POSTGRES_PORT:-}" POSTGRES_PORT $((PORT_BASE + 4)))"
POSTGRES_BIN="${PARABIT_POSTGRES_BIN:-/usr/lib/postgresql/15/bin}"
POSTGRES_DIR="$STATE_DIR/postgres"        # owned by the user PostgreSQL runs as: its data dir and its log
POSTGRES_DATA="$POSTGRES_DIR/data"
POSTGRES_LOG="$POSTGRES_DIR/postgres.log"
POSTGRES_PASSFILE="$STATE_DIR/pgpass"     # the database password, for MLflow only (libpq's PGPASSFILE format)
POSTGRES_ROLE=mlflow                      # the database user MLflow connects as
MLFLOW_STORE_URI_POSTGRES="postgresql://$POSTGRES_ROLE@127.0.0.1:$POSTGRES_PORT/mlflow"
MLFLOW_AUTH_DB_POSTGRES="postgresql://$POSTGRES_ROLE@127.0.0.1:$POSTGRES_PORT/mlflow_auth"
# PostgreSQL refuses to run as root: started by root, it runs as this unprivileged user (the Debian package's own).
if [ "$(id -u)" -eq 0 ]; then
    POSTGRES_OS_USER="${PARABIT_POSTGRES_USER:-postgres}"
else
    POSTGRES_OS_USER="$(id -un)"
fi
as_postgres_user() {  # as_postgres_user CMD...: CMD as POSTGRES_OS_USER (the current user unless this is root)
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u "$POSTGRES_OS_USER" -- "$@"
    else
        "$@"
    fi
}
# The cluster's PostgreSQL server (start.sh, and restore.sh, which makes a new one to load a backup into):
# postgres_init makes its database cluster, start_postgres starts it (and creates the databases MLflow
# uses, empty, for AUTH=true also mlflow_auth), psql_query asks it.
postgres_init() {  # the first start: a new database cluster owned by POSTGRES_OS_USER, password logins only
    [ -f "$POSTGRES_DATA/PG_VERSION" ] && return 0
    [ -x "$POSTGRES_BIN/initdb" ] || die "no PostgreSQL in $POSTGRES_BIN: install the Debian package postgresql (make \
setup does) or set PARABIT_POSTGRES_BIN"
    id "$POSTGRES_OS_USER" >/dev/null 2>&1 || die "PostgreSQL runs as user '$POSTGRES_OS_USER' (it refuses root), \
which does not exist: set PARABIT_POSTGRES_USER to an unprivileged user"
    mkdir -p "$POSTGRES_DIR"
    chmod 700 "$POSTGRES_DIR"
    [ "$(id -u)" -ne 0 ] || chown "$POSTGRES_OS_USER:" "$POSTGRES_DIR"
    as_postgres_user test -w "$POSTGRES_DIR" || die "user $POSTGRES_OS_USER cannot reach $POSTGRES_DIR: every folder \
above it must be searchable by that user (chmod o+x), or choose another --state-dir"
    log "creating the PostgreSQL database cluster in $POSTGRES_DATA (user $POSTGRES_ROLE, owned by $POSTGRES_OS_USER)"
    local password password_file="$POSTGRES_DIR/initdb.password"
    password="$(umask 077 && python -c 'import secrets; print(secrets.token_hex(24))')"
    # initdb reads the superuser's password from a file: one only POSTGRES_OS_USER can read, deleted right after.
    (umask 077 && echo "$password" >"$password_file")
    [ "$(id -u)" -ne 0 ] || chown "$POSTGRES_OS_USER:" "$password_file"
    if ! as_postgres_user "$POSTGRES_BIN/initdb" -D "$POSTGRES_DATA" -U "$POSTGRES_ROLE" --pwfile="$password_file" \
        --auth=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >"$STATE_DIR/logs/initdb.log" 2>&1; then
        rm -f "$password_file"
        tail -n 20 "$STATE_DIR/logs/initdb.log" >&2
        die "initdb failed (log: $STATE_DIR/logs/initdb.log)"
    fi
    rm -f "$password_file"
    # libpq's password file (host:port:database:user:password) for MLflow; any port, so --port-base may change.
    (umask 077 && echo "127.0.0.1:*:*:$POSTGRES_ROLE:$password" >"$POSTGRES_PASSFILE")
}

psql_query() {  # psql_query DATABASE SQL: the answer, unaligned, as MLflow's database user
    PGPASSFILE="$POSTGRES_PASSFILE" PGCONNECT_TIMEOUT=10 "$POSTGRES_BIN/psql" -X -w -q -v ON_ERROR_STOP=1 -At \
        -h 127.0.0.1 -p "$POSTGRES_PORT" -U "$POSTGRES_ROLE" -d "$1" -c "$2"
}

start_postgres() {
    postgres_init
    log "starting PostgreSQL on 127.0.0.1:$POSTGRES_PORT (data $POSTGRES_DATA, log $POSTGRES_LOG)"
    # TCP on the loopback interface only, and no Unix socket. pg_ctl waits until it accepts connections; the
    # postmaster it starts leads a session of its own, so its pid is this part's process group, as for the others.
    if ! as_postgres_user "$POSTGRES_BIN/pg_ctl" -D "$POSTGRES_DATA" -l "$POSTGRES_LOG" -w -t "$START_TIMEOUT" -s \
        -o "-c listen_addresses=127.0.0.1 -c port=$POSTGRES_PORT -c unix_socket_directories=''" start; then
        tail -n 20 "$POSTGRES_LOG" >&2 || true
        die "PostgreSQL did not start (log: $POSTGRES_LOG)"
    fi
    record_group postgres "$(head -n 1 "$POSTGRES_DATA/postmaster.pid")"
    local database
    for database in mlflow $([ "$AUTH" = false ] || echo mlflow_auth); do
        [ "$(psql_query postgres "SELECT 1 FROM pg_database WHERE datname = '$database'")" = 1 ] ||
            psql_query postgres "CREATE DATABASE $database"
    done
}

MLFLOW_AUTH_INI="$STATE_DIR/basic_auth.ini"      # written by start.sh for each start (MLFLOW_AUTH_CONFIG_PATH)
MLFLOW_SECRET_KEY_FILE="$STATE_DIR/mlflow_secret_key"  # MLflow's Flask secret (CSRF), made once, kept across starts
MLFLOW_ADMIN_USER="${PARABIT_MLFLOW_ADMIN_USER:-admin}"

read_tracking_conf() {  # TRACKING and AUTH as recorded by the last start (sqlite, false when none was)
    TRACKING=sqlite AUTH=false
    if [ -f "$TRACKING_CONF" ]; then
        TRACKING="$(sed -n 's/^TRACKING=//p' "$TRACKING_CONF")"
        AUTH="$(sed -n 's/^AUTH=//p' "$TRACKING_CONF")"
    fi
}

# The cluster's own binaries: nodes started from the venv run jobs with the venv's Python.
VENV_BIN="${PARABIT_VENV_BIN:-$PROJECT_ROOT/.venv/bin}"
export PATH="$VENV_BIN:$PATH"

# Ray's session files (sockets, logs, unpacked working dirs) go under one short temp dir per cluster with a
# folder per node. Per node, because nodes sharing a session dir also share runtime_resources/: a worker node
# unpacking a job's working_dir there replaces the driver's current directory under it (FileNotFoundError from
# os.getcwd() mid-job). Short, because Unix socket paths must stay under 107 bytes.
RAY_TEMP_DIR="$(setting "${PARABIT_RAY_TEMP_DIR:-}" RAY_TEMP_DIR "/tmp/parabit-ray-$PORT_BASE")"
node_temp_dir() { echo "$RAY_TEMP_DIR/node-$1"; }

# Token auth, explicitly and the same for every process that talks to this cluster: with RAY_AUTH_MODE unset, a
# stray ~/.ray/auth_token switches auth on for `ray start` but not for the CLI (InvalidAuthToken). The token is
# the cluster's own file, so other Rays of this user are unaffected. A function, because only the local cluster's
# clients want it: submit.sh to a remote cluster keeps the caller's settings.
RAY_AUTH_TOKEN_FILE="$STATE_DIR/auth_token"
use_cluster_auth() {
    export RAY_AUTH_MODE="${RAY_AUTH_MODE:-token}"
    export RAY_AUTH_TOKEN_PATH="${RAY_AUTH_TOKEN_PATH:-$RAY_AUTH_TOKEN_FILE}"
}

log() { echo "[parabit-cluster] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# The file start.sh writes for clients (submit.sh, users: `source $STATE_DIR/cluster.env`).
CLUSTER_ENV="$STATE_DIR/cluster.env"

node_port() {  # node_port NODE_INDEX OFFSET: a port in node NODE_INDEX's block (offsets 0..99)
    echo $((PORT_BASE + 100 * ($1 + 1) + $2))
}

pid_alive() { kill -0 "$1" 2>/dev/null; }

start_time() {  # start_time PID: when PID started (clock ticks after boot: /proc/PID/stat's 22nd field), empty if gone
    sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20 || true
}

record_group() {  # record_group NAME PID: PID leads part NAME (NAME.pid), and its start time (NAME.started): a group
    # id reused by another process after a crash is then told apart from the recorded one (stop.sh)
    echo "$2" >"$STATE_DIR/$1.pid"
    start_time "$2" >"$STATE_DIR/$1.started"
}

group_alive() {  # any process left in process group $1?
    pgrep -g "$1" >/dev/null 2>&1
}

spawn() {  # spawn NAME LOGFILE CMD...: run CMD in its own session (pgid = pid), record the pid in NAME.pid
    local name="$1" logfile="$2"
    shift 2
    setsid "$@" >"$logfile" 2>&1 </dev/null &
    record_group "$name" $!
}

http_get() {  # http_get URL: the body, with this cluster's Ray token (the dashboard answers 401 without it)
    local auth=()
    [ -s "${RAY_AUTH_TOKEN_PATH:-}" ] && auth=(-H "Authorization: Bearer $(cat "$RAY_AUTH_TOKEN_PATH")")
    curl -fs --max-time 5 "${auth[@]}" "$1"
}

# `ray start` waits a fixed time (inside Ray) for its raylet to register and for the dashboard to answer; on a machine
# busy with other work that is sometimes too little, and the node exits during start-up. Such a node is started
# again, up to this many times in all, before start.sh gives up with its log.
NODE_START_ATTEMPTS=3

exited_during_start() {  # exited_during_start WHAT LOGFILE: the last lines of the log, then fail
    # Without the raylet's state dump, which `ray start` prints on a raylet's exit and which buries its reason.
    grep -v '\[state-dump\]' "$2" | tail -n 30 >&2 || true
    die "$1 exited during start-up (log: $2)"
}

wait_http() {  # wait_http URL WHAT PIDFILE LOGFILE: poll until URL answers; returns 3 at once if the process exited
    local url="$1" what="$2" pid logfile="$4" deadline=$((SECONDS + START_TIMEOUT))
    pid="$(cat "$3")"
    until http_get "$url" >/dev/null; do
        pid_alive "$pid" || return 3
        ((SECONDS < deadline)) || { tail -n 30 "$logfile" >&2 || true; die "$what not healthy at $url after ${START_TIMEOUT}s (log: $logfile)"; }
        sleep 1
    done
}

stop_group() {  # stop_group NAME [SIGNAL]: stop the process group recorded in NAME.pid with SIGNAL (TERM), SIGKILL
    # whatever outlives STOP_TIMEOUT
    local pidfile="$STATE_DIR/$1.pid" pgid deadline
    [ -f "$pidfile" ] || return 0
    pgid="$(cat "$pidfile")"
    if group_alive "$pgid"; then
        log "stopping $1 (process group $pgid)"
        # The leader only (`ray start --block`, `mlflow server`, the postmaster): it shuts its children down in
        # order. Signalling the whole group would kill the GCS first, and `ray start` would then wait 30 s for it
        # to drain the node.
        kill "-${2:-TERM}" "$pgid" 2>/dev/null || true
        deadline=$((SECONDS + STOP_TIMEOUT))
        while group_alive "$pgid" && ((SECONDS < deadline)); do sleep 0.5; done
        if group_alive "$pgid"; then
            log "$1 still running after ${STOP_TIMEOUT}s: SIGKILL"
            kill -KILL -- "-$pgid" 2>/dev/null || true
            sleep 0.5
        fi
    fi
    rm -f "$pidfile" "$STATE_DIR/$1.started"
}
