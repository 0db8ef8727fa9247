#!/usr/bin/env bash
# Restores a backup of infra/local/backup.sh into a new (or empty) state dir: a new PostgreSQL database cluster
# (initdb, a new random password for MLflow's database user) with MLflow's databases loaded from the backup, the
# artifact store, and the settings start.sh reads (tracking.conf, the Flask secret key). The cluster is not started:
# `start.sh --state-dir DIR` (no tracking flags and no admin password needed) then serves the restored runs, models
# and logins.
#
#   infra/local/restore.sh BACKUP [--state-dir DIR] [--port-base P]   (or PARABIT_CLUSTER_DIR, PARABIT_PORT_BASE: the
#                                   PostgreSQL server is started on BASE+4 while the backup is loaded, then stopped)
set -euo pipefail

backup=""
while [ $# -gt 0 ]; do
    case "$1" in
        --state-dir) export PARABIT_CLUSTER_DIR="$2"; shift 2 ;;
        --port-base) export PARABIT_PORT_BASE="$2"; shift 2 ;;
        -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
        -*) echo "restore.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) [ -z "$backup" ] || { echo "restore.sh: one BACKUP only, got '$backup' and '$1'" >&2; exit 2; }
           backup="$1"; shift ;;
    esac
done
[ -n "$backup" ] || { echo "usage: restore.sh BACKUP [--state-dir DIR] (see --help)" >&2; exit 2; }
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

[ -f "$backup/backup.info" ] && [ -f "$backup/mlflow.pgdump" ] && [ -d "$backup/mlartifacts" ] ||
    die "$backup is not a backup of backup.sh (it needs backup.info, mlflow.pgdump and mlartifacts/)"
backup="$(cd "$backup" && pwd)"
# Never over a cluster's state: an empty folder, or none.
if [ -e "$STATE_DIR" ] && [ -n "$(ls -A "$STATE_DIR")" ]; then
    die "the state dir $STATE_DIR is not empty: restore into a new or empty one (stop its cluster and move it away)"
fi
mkdir -p "$STATE_DIR/logs"

TRACKING=postgres
AUTH="$(sed -n 's/^AUTH=//p' "$backup/tracking.conf")"
databases="$(sed -n 's/^databases=//p' "$backup/backup.info")"
# If anything below fails, stop the PostgreSQL server it started (the half-restored state stays, for a look).
trap 'status=$?; stop_group postgres INT; if [ $status -ne 0 ]; then log "restore failed: $STATE_DIR is incomplete: \
empty it before trying again"; fi' EXIT
start_postgres  # a new database cluster; the databases MLflow uses, empty
for database in $databases; do
    log "loading database $database from $backup/$database.pgdump"
    psql_query postgres "SELECT 1 FROM pg_database WHERE datname = '$database'" | grep -qx 1 ||
        psql_query postgres "CREATE DATABASE $database"
    PGPASSFILE="$POSTGRES_PASSFILE" PGCONNECT_TIMEOUT=10 "$POSTGRES_BIN/pg_restore" -w -h 127.0.0.1 \
        -p "$POSTGRES_PORT" -U "$POSTGRES_ROLE" --dbname="$database" --no-owner --no-acl --exit-on-error \
        --single-transaction "$backup/$database.pgdump" >"$STATE_DIR/logs/restore-$database.log" 2>&1 || {
        tail -n 20 "$STATE_DIR/logs/restore-$database.log" >&2
        die "pg_restore of database $database failed (log: $STATE_DIR/logs/restore-$database.log)"
    }
done
stop_group postgres INT
log "copying the artifact store to $STATE_DIR/mlartifacts"
cp -a "$backup/mlartifacts" "$STATE_DIR/mlartifacts"
cp "$backup/tracking.conf" "$TRACKING_CONF"
if [ -f "$backup/mlflow_secret_key" ]; then
    (umask 077 && cp "$backup/mlflow_secret_key" "$MLFLOW_SECRET_KEY_FILE")
fi
log "restored $databases and $(find "$STATE_DIR/mlartifacts" -type f | wc -l) artifact file(s) into $STATE_DIR \
(backup of $(sed -n 's/^created=//p' "$backup/backup.info")); start it with infra/local/start.sh --state-dir $STATE_DIR"
