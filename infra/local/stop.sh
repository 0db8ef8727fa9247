#!/usr/bin/env bash
# Stops what infra/local/start.sh started from the same state dir, and nothing else: each node and the MLflow
# server by the process group recorded in its pid file. `ray stop` is not used: it kills every Ray on the machine.
#
#   infra/local/stop.sh [--state-dir DIR] [--quiet]     (or PARABIT_CLUSTER_DIR; the same settings as start.sh)
set -euo pipefail

quiet=false
while [ $# -gt 0 ]; do
    case "$1" in
        --state-dir) export PARABIT_CLUSTER_DIR="$2"; shift 2 ;;
        --quiet) quiet=true; shift ;;
        -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
        *) echo "stop.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

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
$quiet || log "stopped; logs and the MLflow store stay in $STATE_DIR"
