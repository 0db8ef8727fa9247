"""Create (or update) a user of an MLflow server started with basic-auth, as a reader or an editor of every run; or
replace the password of any user, the admin's included.

Run through ``infra/local/tracking-user.sh``, which supplies the server and the passwords; by hand:

    MLFLOW_TRACKING_USERNAME=admin MLFLOW_TRACKING_PASSWORD=... PARABIT_USER_PASSWORD=... \\
        .venv/bin/python infra/local/tracking_user.py --uri http://127.0.0.1:26303 alice edit

Passwords come from the environment only (a command line is visible to every user of the machine in ``ps``). The
two roles live in MLflow's ``default`` workspace (the one every run is in) and are created on first use:

* ``reader``: READ on every experiment and registered model: runs, metrics, artifacts and the registry, nothing more
  (no run, experiment, model or version can be created: that needs the workspace grant below).
* ``editor``: USE on the workspace (create experiments and registered models) and EDIT on every experiment and
  registered model: log runs into the team's experiments, register versions, move aliases. Not delete, not manage
  users (the admin does).

A user given a role here loses the other one, so running it again changes a user's role or password. ``password``
instead of a role replaces an existing user's password and nothing else: the admin's too, for which MLflow wants the
current password as well (``current_password``: a user changing their own password, as the admin changing its own
does, is refused with HTTP 400 "Current password is required" without it); it is the admin's login here.
"""

from __future__ import annotations

import os
import sys

import click
from mlflow.exceptions import MlflowException
from mlflow.server.auth.client import AuthServiceClient

# An administrator's one-off calls wait for a busy server (each checks the admin's password hash, on one server
# worker): 10 s, the timeout a training process inherits from parabit, failed here on a loaded 2-core machine.
# MLflow reads the variable at each request.
os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] = "120"

WORKSPACE = "default"
ROLES = {
    "read": ("reader", [("experiment", "*", "READ"), ("registered_model", "*", "READ")]),
    "edit": ("editor", [("workspace", "*", "USE"), ("experiment", "*", "EDIT"), ("registered_model", "*", "EDIT")]),
}


def ensure_role(admin: AuthServiceClient, name: str, grants: list[tuple[str, str, str]]) -> int:
    """The id of role ``name`` in the default workspace, created with ``grants`` (or given the ones it lacks)."""
    role = next((r for r in admin.list_roles(WORKSPACE) if r.name == name), None) or admin.create_role(WORKSPACE, name)
    held = {(p.resource_type, p.resource_pattern, p.permission) for p in admin.list_role_permissions(role.id)}
    for grant in grants:
        if grant not in held:
            admin.add_role_permission(role.id, *grant)
    return role.id


@click.command()
@click.option("--uri", required=True, help="the MLflow server, e.g. http://127.0.0.1:26303")
@click.argument("username")
@click.argument("access", type=click.Choice([*sorted(ROLES), "password"]))
def main(uri: str, username: str, access: str) -> None:
    """Give USERNAME read or edit access to every run and model of the server, or (ACCESS ``password``) a new password
    only (its password: $PARABIT_USER_PASSWORD; the admin's: $MLFLOW_TRACKING_USERNAME / $MLFLOW_TRACKING_PASSWORD)."""
    password = os.environ.get("PARABIT_USER_PASSWORD", "")
    if not password:
        sys.exit("tracking_user.py: set PARABIT_USER_PASSWORD to the new user's password")
    admin = AuthServiceClient(uri)
    if access == "password":
        rotate_password(admin, uri, username, password)
        return
    if username == os.environ.get("MLFLOW_TRACKING_USERNAME"):
        sys.exit(f"tracking_user.py: {username!r} is the admin, who needs no role: to change its password, run "
                 "tracking-user.sh with `password` instead of read|edit")
    role_ids = {key: ensure_role(admin, name, grants) for key, (name, grants) in ROLES.items()}
    try:
        admin.create_user(username, password)
        done = "created"
    except MlflowException as err:
        if err.error_code != "RESOURCE_ALREADY_EXISTS":
            raise
        admin.update_user_password(username, password)
        done = "updated (password replaced)"
    held = {role.id for role in admin.list_user_roles(username)}
    for key, role_id in role_ids.items():
        if key == access and role_id not in held:
            admin.assign_role(username, role_id)
        elif key != access and role_id in held:
            admin.unassign_role(username, role_id)
    name, grants = ROLES[access]
    given = ", ".join(f"{permission} on {kind} {pattern}" for kind, pattern, permission in grants)
    click.echo(f"user {username!r} {done} on {uri}: role {name} ({given})")


def rotate_password(admin: AuthServiceClient, uri: str, username: str, password: str) -> None:
    """USERNAME's password replaced by ``password``, nothing else changed; for the admin itself, its current password
    (its login here) goes along, as MLflow requires of a user changing their own."""
    login, login_password = os.environ["MLFLOW_TRACKING_USERNAME"], os.environ["MLFLOW_TRACKING_PASSWORD"]
    own = username == login
    if own and password == login_password:
        sys.exit(f"tracking_user.py: the new password of {username!r} is its current one: choose another")
    admin.get_user(username)  # a user who does not exist: one line (RESOURCE_DOES_NOT_EXIST), before any change
    admin.update_user_password(username, password, current_password=login_password if own else None)
    click.echo(f"user {username!r} on {uri}: password replaced" + (
        " (the admin's: give its new password file to tracking-user.sh from now on; start.sh needs none)" if own
        else ""))


if __name__ == "__main__":
    try:
        main()
    except MlflowException as err:  # the admin's login refused, a password MLflow rejects, ...: one line
        if err.error_code in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
            admin = os.environ.get("MLFLOW_TRACKING_USERNAME")
            sys.exit(f"tracking_user.py: the server refused the login of its admin {admin!r}: check the admin "
                     "password (--admin-password-file or MLFLOW_AUTH_ADMIN_PASSWORD)")
        sys.exit(f"tracking_user.py: {' '.join(err.message.split())}")
