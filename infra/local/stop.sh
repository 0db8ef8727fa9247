#!/usr/bin/env bash
# Stops what infra/local/start.sh started from the same state dir, and nothing else: each node, the MLflow server
# and its PostgreSQL server by the process group recorded in its pid file (or just one of them, with --only), then
# what is left of their process tree and of the cluster's recorded Ray temp dir (cluster.conf). `ray stop` is not
# used: it kills every Ray on the machine. The stores (SQLite file or PostgreSQL data dir, artifacts)
# stay, for the next start.
#
#   infra/local/stop.sh [--state-dir DIR] [--quiet]     (or PARABIT_CLUSTER_DIR; the same settings as start.sh)
#   infra/local/stop.sh --only worker-N|mlflow|postgres [--kill]  stop that one part; --kill: SIGKILL it and its
#                                                        Ray processes at once, as a lost host would (a fault drill)
set -euo pipefail

quiet=false
only=""
kill_now=false
while [ $# -gt 0 ]; do
    case "$1" in
        --state-dir) export PARABIT_CLUSTER_DIR="$2"; shift 2 ;;
        --quiet) quiet=true; shift ;;
        --only) only="$2"; shift 2 ;;
        --kill) kill_now=true; shift ;;
        -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
        *) echo "stop.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

# This cluster's own Ray temp dir, as start.sh recorded it, whatever the environment says: a PARABIT_PORT_BASE or
# PARABIT_RAY_TEMP_DIR of another cluster (or none, for a cluster started with --port-base) would name the temp dir, and
# so the processes, of another cluster.
recorded_temp_dir="$(recorded RAY_TEMP_DIR)"
RAY_TEMP_DIR="${recorded_temp_dir:-$RAY_TEMP_DIR}"

recorded_processes() {  # "PID START_TIME" of each process of the recorded groups and of each of their descendants
    # Ray starts workers and job drivers in sessions of their own, but as children of the node's raylet: the process
    # tree from the recorded groups finds them. Only groups whose leader is still the recorded process (same start
    # time: a dead cluster's group id may be another's by now); with the start time, a pid reused meanwhile is never
    # signalled either.
    local groups="" pidfile pid
    for pidfile in "$STATE_DIR"/*.pid; do
        pid="$(cat "$pidfile")"
        if [ ! -f "${pidfile%.pid}.started" ] || [ "$(start_time "$pid")" = "$(cat "${pidfile%.pid}.started")" ]; then
            groups+=" $pid"
        fi
    done
    for pid in $(ps -eo pid=,ppid=,pgid= | awk -v groups="$groups" '
        BEGIN { n = split(groups, g, " "); for (i = 1; i <= n; i++) ours[g[i]] = 1 }
        { parent[$1] = $2; if ($3 in ours) mine[$1] = 1 }
        END {
            do { added = 0; for (p in parent) if (!(p in mine) && (parent[p] in mine)) { mine[p] = 1; added = 1 } }
            while (added)
            for (p in mine) print p
        }'); do
        echo "$pid $(start_time "$pid")"
    done
}

# PostgreSQL's fast shutdown (SIGINT: roll back open transactions, close sessions, checkpoint); its SIGTERM waits for
# every client to disconnect.
stop_signal() { [ "$1" = postgres ] && echo INT || echo TERM; }

if [ -n "$only" ]; then
    [[ "$only" =~ ^(worker-[1-9][0-9]*|mlflow|postgres)$ ]] ||
        die "--only takes worker-N, mlflow or postgres, got '$only'"
    [ -f "$STATE_DIR/$only.pid" ] || die "--only $only: it is not running from $STATE_DIR"
    if $kill_now; then
        pgid="$(cat "$STATE_DIR/$only.pid")"
        # The node's Ray workers left its process group; they carry the node's own temp dir on their command line.
        node_processes="$( [[ "$only" != worker-* ]] || pgrep -f -- "$(node_temp_dir "${only#worker-}")/" || true)"
        log "killing $only (process group $pgid${node_processes:+ and its Ray processes}) with SIGKILL"
        # shellcheck disable=SC2086  # one pid per word
        kill -KILL -- "-$pgid" $node_processes 2>/dev/null || true
        rm -f "$STATE_DIR/$only.pid" "$STATE_DIR/$only.started"
    else
        stop_group "$only" "$(stop_signal "$only")"
    fi
    exit 0
fi

if ! compgen -G "$STATE_DIR/*.pid" >/dev/null; then
    $quiet || log "nothing to stop in $STATE_DIR"
    exit 0
fi
processes="$(recorded_processes)"  # before any group is stopped and its children orphaned
# Workers before the head (they would otherwise retry the vanished GCS for a while); MLflow last.
for pidfile in "$STATE_DIR"/worker-*.pid; do
    [ -e "$pidfile" ] && stop_group "$(basename "$pidfile" .pid)"
done
stop_group head
stop_group mlflow
stop_group postgres "$(stop_signal postgres)"  # after the MLflow server, its one client

# Ray workers and drivers of this cluster that outlived their node (they left its process group): those of the
# recorded process tree still alive as the same process, and any carrying this cluster's own temp dir on their
# command line (an orphan of an earlier crash).
leftovers="$(echo "$processes" | while read -r pid started; do
    [ -n "$pid" ] && [ -n "$started" ] && [ "$(start_time "$pid")" = "$started" ] && echo "$pid"
done || true; pgrep -f -- "$RAY_TEMP_DIR/" || true)"
leftovers="$(echo "$leftovers" | sort -un | tr '\n' ' ' | sed 's/^ *//; s/ *$//')"
if [ -n "$leftovers" ]; then
    log "stopping leftover processes of this cluster: $leftovers"
    # shellcheck disable=SC2086  # one pid per word
    kill -TERM $leftovers 2>/dev/null || true
    sleep 2
    # shellcheck disable=SC2086
    kill -KILL $leftovers 2>/dev/null || true
fi
rm -f "$CLUSTER_ENV"
$quiet || log "stopped; logs and the MLflow store stay in $STATE_DIR (the next start uses them)"
