#!/usr/bin/env bash
# Create a user of the local cluster's MLflow server (started with `start.sh --auth`) who can read every run and
# model, or also log runs and register models; again for an existing user, it changes their role and password.
# `password` instead of a role replaces the password of any existing user, the admin's included, and nothing else.
#
#   infra/local/tracking-user.sh NAME read|edit --password-file FILE [--admin-password-file FILE] [--uri URL]
#   infra/local/tracking-user.sh NAME password --password-file NEW [--admin-password-file FILE] [--uri URL]
#   (the admin's own: tracking-user.sh admin password --password-file NEW --admin-password-file CURRENT)
#
# NAME's password is the first line of FILE (or $PARABIT_USER_PASSWORD); the admin's comes from the file or
# variable start.sh took it from (--admin-password-file / $PARABIT_MLFLOW_ADMIN_PASSWORD_FILE, or
# $MLFLOW_AUTH_ADMIN_PASSWORD). The server: that of the cluster of --state-dir (its port as start.sh recorded it) or
# --uri. The user then logs in with MLflow's own variables: MLFLOW_TRACKING_USERNAME=NAME MLFLOW_TRACKING_PASSWORD=...
set -euo pipefail

args=()
uri=""
while [ $# -gt 0 ]; do
    case "$1" in
        --password-file) export PARABIT_USER_PASSWORD_FILE="$2"; shift 2 ;;
        --admin-password-file) export PARABIT_MLFLOW_ADMIN_PASSWORD_FILE="$2"; shift 2 ;;
        --uri) uri="$2"; shift 2 ;;
        --state-dir) export PARABIT_CLUSTER_DIR="$2"; shift 2 ;;
        --port-base) export PARABIT_PORT_BASE="$2"; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        -*) echo "tracking-user.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) args+=("$1"); shift ;;
    esac
done
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

[ "${#args[@]}" -eq 2 ] && [[ "${args[1]}" =~ ^(read|edit|password)$ ]] ||
    { echo "usage: tracking-user.sh NAME read|edit|password --password-file FILE (see --help)" >&2; exit 2; }
first_line() {  # first_line FILE WHAT: the first line of FILE, or fail naming WHAT
    [ -s "$1" ] || die "$2: $1 does not exist or is empty"
    head -n 1 "$1"
}
if [ -n "${PARABIT_USER_PASSWORD_FILE:-}" ]; then
    PARABIT_USER_PASSWORD="$(first_line "$PARABIT_USER_PASSWORD_FILE" --password-file)"
fi
[ -n "${PARABIT_USER_PASSWORD:-}" ] ||
    die "the new user's password: pass --password-file FILE (or set PARABIT_USER_PASSWORD)"
admin_password="${MLFLOW_AUTH_ADMIN_PASSWORD:-}"
if [ -n "${PARABIT_MLFLOW_ADMIN_PASSWORD_FILE:-}" ]; then
    admin_password="$(first_line "$PARABIT_MLFLOW_ADMIN_PASSWORD_FILE" --admin-password-file)"
fi
[ -n "$admin_password" ] ||
    die "the admin's password: pass --admin-password-file FILE (or set MLFLOW_AUTH_ADMIN_PASSWORD)"

# Through the environment only: a command line is visible to every user in `ps`. (MLflow's server module warns
# about a Starlette deprecation when imported: nothing this command's user can act on.)
PARABIT_USER_PASSWORD="$PARABIT_USER_PASSWORD" MLFLOW_TRACKING_USERNAME="$MLFLOW_ADMIN_USER" \
    MLFLOW_TRACKING_PASSWORD="$admin_password" \
    exec python -W "ignore:starlette.middleware.wsgi is deprecated" "$INFRA_LOCAL_DIR/tracking_user.py" \
    --uri "${uri:-$MLFLOW_URL}" "${args[@]}"
