#!/usr/bin/env bash
# A backup of the cluster's tracking server while it runs: MLflow's two PostgreSQL databases (`mlflow`: runs, metrics,
# the registry; `mlflow_auth`: users, roles, permissions) as pg_dump archives, then the artifact store
# ($STATE_DIR/mlartifacts), and the settings a restored server needs (tracking.conf, the Flask secret key).
# Consistent while jobs log: pg_dump reads each database as one snapshot, and the artifacts are copied after it, so
# every artifact that the dumped rows name (a run's files, a model version's source) was uploaded before its row was
# written and is in the copy; files uploaded later come along too and name nothing restored.
#
#   infra/local/backup.sh DEST [--state-dir DIR]    (or PARABIT_CLUSTER_DIR; the same settings as start.sh)
#
# DEST is a new folder (it must not exist); it appears only once the backup is complete (written as DEST.partial,
# renamed at the end). Restore it with infra/local/restore.sh DEST --state-dir NEW_DIR.
set -euo pipefail

dest=""
while [ $# -gt 0 ]; do
    case "$1" in
        --state-dir) export PARABIT_CLUSTER_DIR="$2"; shift 2 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        -*) echo "backup.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) [ -z "$dest" ] || { echo "backup.sh: one DEST only, got '$dest' and '$1'" >&2; exit 2; }
           dest="$1"; shift ;;
    esac
done
[ -n "$dest" ] || { echo "usage: backup.sh DEST [--state-dir DIR] (see --help)" >&2; exit 2; }
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

[ ! -e "$dest" ] || die "the backup folder $dest exists already: name a new one"
[ ! -e "$dest.partial" ] || die "$dest.partial exists (an interrupted backup?): remove it first"
read_tracking_conf
[ -f "$TRACKING_CONF" ] || die "no cluster state in $STATE_DIR (no tracking.conf): pass its --state-dir"
[ "$TRACKING" = postgres ] || die "the cluster in $STATE_DIR keeps MLflow in $TRACKING; backup.sh backs up the \
PostgreSQL store only (start.sh --tracking postgres)"
# The running PostgreSQL of this state dir, at the port it really listens on (postmaster.pid's 4th line), so a
# backup needs no --port-base.
[ -f "$STATE_DIR/postgres.pid" ] && [ -f "$POSTGRES_DATA/postmaster.pid" ] &&
    pid_alive "$(cat "$STATE_DIR/postgres.pid")" ||
    die "the PostgreSQL server of $STATE_DIR is not running: start the cluster (or start.sh --only postgres) first"
POSTGRES_PORT="$(sed -n 4p "$POSTGRES_DATA/postmaster.pid")"

dump() {  # dump DATABASE FILE: one consistent snapshot of DATABASE, in pg_dump's custom format (for pg_restore)
    PGPASSFILE="$POSTGRES_PASSFILE" PGCONNECT_TIMEOUT=10 "$POSTGRES_BIN/pg_dump" -w -h 127.0.0.1 -p "$POSTGRES_PORT" \
        -U "$POSTGRES_ROLE" --format=custom --no-owner --no-acl --file="$2" "$1" ||
        die "pg_dump of database $1 failed (PostgreSQL log: $POSTGRES_LOG)"
}

partial="$dest.partial"
mkdir -p "$partial"
chmod 700 "$partial"  # password hashes, the Flask secret
trap 'status=$?; if [ $status -ne 0 ]; then rm -rf "$partial"; fi' EXIT
databases=(mlflow)
[ "$(psql_query postgres "SELECT 1 FROM pg_database WHERE datname = 'mlflow_auth'")" != 1 ] ||
    databases=(mlflow_auth mlflow)
# The databases first, then the artifacts: see the top of this file.
for database in "${databases[@]}"; do
    log "dumping database $database (127.0.0.1:$POSTGRES_PORT)"
    dump "$database" "$partial/$database.pgdump"
done
log "copying the artifact store $STATE_DIR/mlartifacts"
if [ -d "$STATE_DIR/mlartifacts" ]; then
    cp -a "$STATE_DIR/mlartifacts" "$partial/mlartifacts"
else
    mkdir "$partial/mlartifacts"  # no artifact logged yet
fi
cp "$TRACKING_CONF" "$partial/tracking.conf"
[ ! -f "$MLFLOW_SECRET_KEY_FILE" ] || cp "$MLFLOW_SECRET_KEY_FILE" "$partial/mlflow_secret_key"
cat >"$partial/backup.info" <<INFO
# Written by infra/local/backup.sh; restore with infra/local/restore.sh $dest --state-dir NEW_DIR
created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
state_dir=$STATE_DIR
databases=${databases[*]}
postgres=$(psql_query postgres "SHOW server_version")
mlflow=$(python -c 'import importlib.metadata as m; print(m.version("mlflow"))')
INFO
mv "$partial" "$dest"
log "backed up ${databases[*]} and $(find "$dest/mlartifacts" -type f | wc -l) artifact file(s) to $dest"
