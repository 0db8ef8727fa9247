#!/usr/bin/env bash
# Stops what infra/local/start.sh started from the same state dir, and nothing else: each node, the MLflow server
# and its PostgreSQL server by the process group recorded in its pid file (or just one of them, with --only). `ray
# stop` is not used: it kills every Ray on the machine. The stores (SQLite file or PostgreSQL data dir, artifacts)
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
        rm -f "$STATE_DIR/$only.pid"
    else
        stop_group "$only" "$(stop_signal "$only")"
    fi
    exit 0
fi

if ! compgen -G "$STATE_DIR/*.pid" >/dev/null; then
    $quiet || log "nothing to stop in $STATE_DIR"
    exit 0
fi
# Workers before the head (they would otherwise retry the vanished GCS for a while); MLflow last.
for pidfile in "$STATE_DIR"/worker-*.pid; do
    [ -e "$pidfile" ] && stop_group "$(basename "$pidfile" .pid)"
done
stop_group head
stop_group mlflow
stop_group postgres "$(stop_signal postgres)"  # after the MLflow server, its one client

# Ray workers and drivers of this cluster that left the nodes' process groups (Ray starts some in new sessions):
# they are recognised by this cluster's own temp dir on their command line.
leftovers="$(pgrep -f -- "$RAY_TEMP_DIR/" || true)"
if [ -n "$leftovers" ]; then
    log "stopping leftover processes of this cluster: $(echo "$leftovers" | tr '\n' ' ')"
    # shellcheck disable=SC2086  # one pid per word
    kill -TERM $leftovers 2>/dev/null || true
    sleep 2
    # shellcheck disable=SC2086
    kill -KILL $leftovers 2>/dev/null || true
fi
rm -f "$CLUSTER_ENV"
$quiet || log "stopped; logs and the MLflow store stay in $STATE_DIR (the next start uses them)"
