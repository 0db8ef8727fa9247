"""The real-cluster files under infra/ (AWS launcher, KubeRay, MLflow, Docker): they cannot run here, so their
structure, their cross-references and their version pins are checked against the repository itself."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from parabit.config import load_config
from parabit.paths import PROJECT_ROOT
from parabit.ray_runtime import TORCH_ENV_DEFAULTS
from parabit.recipes.pairs.config import PairsConfig

INFRA = PROJECT_ROOT / "infra"
YAML_FILES = sorted(INFRA.rglob("*.yaml"))
SHELL_SCRIPTS = sorted(INFRA.rglob("*.sh"))
PIN = re.compile(r"^([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==([^\s;]+)")


def _pins() -> dict[str, str]:
    """name -> version from pyproject.toml's dependencies and constraints.txt (lower-case names)."""
    import tomllib

    lines = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    lines += (PROJECT_ROOT / "constraints.txt").read_text().splitlines()
    pins = {}
    for line in lines:
        if match := PIN.match(line.strip()):
            pins[match[1].lower()] = match[2]
    return pins


PINS = _pins()


def _docs(name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((INFRA / name).read_text()) if d]


def _one(docs: list[dict], kind: str, name: str | None = None) -> dict:
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def _containers(pod_template: dict) -> list[dict]:
    return pod_template["spec"]["containers"]


def _pinned_in(text: str, package: str) -> set[str]:
    return set(re.findall(rf"\b{re.escape(package)}==([0-9][^\s\"']*)", text))


def test_pins_are_parsed():
    assert {"torch", "ray", "mlflow"} <= set(PINS)


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: str(p.relative_to(INFRA)))
def test_every_yaml_parses_to_mappings(path: Path):
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    assert docs and all(isinstance(d, dict) for d in docs)
    for doc in docs:
        if "apiVersion" in doc:
            assert doc.get("kind") and doc.get("metadata", {}).get("name"), f"{path}: {doc.get('kind')} lacks a name"


@pytest.mark.parametrize("path", SHELL_SCRIPTS, ids=lambda p: str(p.relative_to(INFRA)))
def test_shell_scripts_are_strict_and_parse(path: Path):
    text = path.read_text()
    if not path.name == "lib.sh":  # sourced, so it inherits the caller's options
        assert "set -euo pipefail" in text
        assert path.stat().st_mode & 0o111, f"{path} is not executable"
    syntax = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr


def test_local_cluster_scripts_never_stop_every_ray_on_the_machine():
    for path in SHELL_SCRIPTS:
        if "local" in path.parts or path.name == "submit.sh":
            code = "\n".join(l for l in path.read_text().splitlines() if not l.lstrip().startswith("#"))
            assert "ray stop" not in code and "pkill" not in code and "killall" not in code, path


def test_runtime_env_declares_the_job_environment_as_placeholders():
    env = yaml.safe_load((INFRA / "runtime_env.yaml").read_text())
    placeholders = {"MLFLOW_TRACKING_URI", "PARABIT_DATA", "PARABIT_OUTPUT"}
    assert set(env["env_vars"]) == placeholders | set(TORCH_ENV_DEFAULTS)
    assert all(env["env_vars"][key] == f"${{{key}}}" for key in placeholders)
    # torch's settings are literal values, the same a local Ray gives its workers
    assert {key: env["env_vars"][key] for key in TORCH_ENV_DEFAULTS} == TORCH_ENV_DEFAULTS
    assert env["working_dir"] == "."
    assert {"outputs/", "mlruns/", "mlartifacts/", "mlflow.db"} <= set(env["excludes"])
    for module in env["py_modules"]:
        assert (PROJECT_ROOT / module / "__init__.py").exists(), module


# --- KubeRay -----------------------------------------------------------------------------------------------------

RAYCLUSTER = _one(_docs("k8s/raycluster.yaml"), "RayCluster")
RAYJOB = _one(_docs("k8s/rayjob.yaml"), "RayJob")
MLFLOW = _docs("k8s/mlflow.yaml")


def test_raycluster_has_a_cpu_head_and_a_gpu_worker_group_at_the_pinned_ray_version():
    assert RAYCLUSTER["apiVersion"] == "ray.io/v1"
    spec = RAYCLUSTER["spec"]
    assert spec["rayVersion"] == PINS["ray"]
    head = spec["headGroupSpec"]
    # KubeRay passes rayStartParams as `--key=value`: every value must be a string.
    assert all(isinstance(v, str) for v in head["rayStartParams"].values())
    assert head["rayStartParams"]["num-cpus"] == "0"  # drivers only: training never lands on the head
    head_limits = _containers(head["template"])[0]["resources"]["limits"]
    assert "nvidia.com/gpu" not in head_limits

    groups = spec["workerGroupSpecs"]
    gpu_groups = [g for g in groups if any("nvidia.com/gpu" in c["resources"]["limits"] for c in _containers(g["template"]))]
    assert gpu_groups, "no worker group asks for nvidia.com/gpu"
    for group in gpu_groups:
        assert group["minReplicas"] <= group["replicas"] <= group["maxReplicas"]
        assert all(isinstance(v, str) for v in group["rayStartParams"].values())
        # the JSON inside KubeRay's quoted string: '"{\"train_slot\": 1}"'
        resources = json.loads(json.loads(group["rayStartParams"]["resources"]))
        assert resources == {"train_slot": 1}
        for container in _containers(group["template"]):
            limits, requests = container["resources"]["limits"], container["resources"].get("requests", {})
            assert int(limits["nvidia.com/gpu"]) >= 1
            assert requests.get("nvidia.com/gpu", limits["nvidia.com/gpu"]) == limits["nvidia.com/gpu"]


def test_every_ray_pod_mounts_the_shared_volume_the_job_paths_point_into():
    env = yaml.safe_load(RAYJOB["spec"]["runtimeEnvYAML"])["env_vars"]
    templates = [RAYCLUSTER["spec"]["headGroupSpec"]["template"]]
    templates += [g["template"] for g in RAYCLUSTER["spec"]["workerGroupSpecs"]]
    for template in templates:
        mounts = {m["mountPath"] for c in _containers(template) for m in c.get("volumeMounts", [])}
        for key in ("PARABIT_DATA", "PARABIT_OUTPUT"):
            assert any(env[key].startswith(mount + "/") for mount in mounts), (key, mounts)


def test_rayjob_runs_a_shipped_entry_point_with_a_config_that_loads():
    assert RAYJOB["apiVersion"] == "ray.io/v1"
    spec = RAYJOB["spec"]
    assert spec["clusterSelector"]["ray.io/cluster"] == RAYCLUSTER["metadata"]["name"]
    words = shlex.split(spec["entrypoint"])
    assert words[0] == "python" and (PROJECT_ROOT / words[1]).is_file(), words
    config_path = PROJECT_ROOT / words[words.index("--config") + 1]
    config = load_config(PairsConfig, config_path)
    assert config.scaling.use_gpu  # the GPU cluster runs the GPU config


def test_rayjob_runtime_env_has_the_keys_of_the_local_one_and_points_at_the_mlflow_service():
    env = yaml.safe_load(RAYJOB["spec"]["runtimeEnvYAML"])["env_vars"]
    local = yaml.safe_load((INFRA / "runtime_env.yaml").read_text())["env_vars"]
    assert set(env) == set(local)
    assert {key: env[key] for key in TORCH_ENV_DEFAULTS} == TORCH_ENV_DEFAULTS
    service = _one(MLFLOW, "Service", "mlflow")
    assert env["MLFLOW_TRACKING_URI"] == f"http://{service['metadata']['name']}:{service['spec']['ports'][0]['port']}"


def test_mlflow_runs_on_postgres_and_s3_behind_cluster_internal_services():
    for service in (d for d in MLFLOW if d["kind"] == "Service"):
        assert service["spec"].get("type", "ClusterIP") == "ClusterIP", service["metadata"]["name"]
    postgres_service = _one(MLFLOW, "Service", "mlflow-postgres")
    postgres = _one(MLFLOW, "StatefulSet", "mlflow-postgres")
    assert postgres["spec"]["serviceName"] == postgres_service["metadata"]["name"]
    assert postgres["spec"]["template"]["metadata"]["labels"] == postgres_service["spec"]["selector"]
    password = {e["name"]: e for e in _containers(postgres["spec"]["template"])[0]["env"]}["POSTGRES_PASSWORD"]
    assert "secretKeyRef" in password["valueFrom"]  # never a literal password in the manifest

    service = _one(MLFLOW, "Service", "mlflow")
    server = _one(MLFLOW, "Deployment", "mlflow")
    assert server["spec"]["template"]["metadata"]["labels"] == service["spec"]["selector"]
    container = _containers(server["spec"]["template"])[0]
    command = shlex.split(container["command"][-1])
    option = {command[i]: command[i + 1] for i in range(len(command) - 1) if command[i].startswith("--")}
    assert int(option["--port"]) == service["spec"]["ports"][0]["targetPort"] == container["ports"][0]["containerPort"]
    assert option["--backend-store-uri"].startswith("postgresql://")
    assert f"@{postgres_service['metadata']['name']}:5432/" in option["--backend-store-uri"]
    assert option["--artifacts-destination"].startswith("s3://")
    assert container["readinessProbe"]["httpGet"]["path"] == "/health"


def test_all_pods_run_one_image():
    images = {c["image"] for t in [RAYCLUSTER["spec"]["headGroupSpec"]["template"]]
              + [g["template"] for g in RAYCLUSTER["spec"]["workerGroupSpecs"]] for c in _containers(t)}
    images |= {c["image"] for c in _containers(_one(MLFLOW, "Deployment", "mlflow")["spec"]["template"])}
    assert len(images) == 1, images


# --- Docker image and AWS launcher -------------------------------------------------------------------------------

DOCKERFILE = (INFRA / "docker" / "Dockerfile").read_text()
AWS = yaml.safe_load((INFRA / "aws" / "cluster.yaml").read_text())
AWS_TEXT = (INFRA / "aws" / "cluster.yaml").read_text()


def test_dockerfile_builds_on_the_pinned_ray_and_installs_torch_then_the_locked_project():
    assert re.search(r"^ARG RAY_VERSION=(\S+)$", DOCKERFILE, re.M)[1] == PINS["ray"]
    assert re.search(r"^FROM rayproject/ray:\$\{RAY_VERSION\}-py311-gpu$", DOCKERFILE, re.M)
    assert _pinned_in(DOCKERFILE, "torch") == {PINS["torch"]}
    torch_at, project_at = DOCKERFILE.index("torch=="), DOCKERFILE.index(_project_install()[0])
    assert torch_at < project_at  # torch first, or the lock could pull another build of it
    apt = re.search(r"^APT_PACKAGES=\((.*)\)$", (PROJECT_ROOT / "scripts" / "setup.sh").read_text(), re.M)[1].split()
    assert all(f" {package}" in DOCKERFILE for package in apt)
    for copied in re.findall(r"^COPY --chown=ray (.+) \S+$", DOCKERFILE, re.M):
        for path in copied.split():
            assert (PROJECT_ROOT / path).exists(), f"Dockerfile copies {path}, which does not exist"


def _project_install() -> tuple[str, str]:
    """The Dockerfile's `pip install` of the project itself (under the lock): the line and what it installs."""
    found = re.findall(r"^(RUN pip install .*-c constraints\.txt (\"?\.(?:\[[a-z,]+\])?\"?))$", DOCKERFILE, re.M)
    assert len(found) == 1, "the Dockerfile must install the project once, under the lock: pip install -c constraints.txt ."
    return found[0]


def _copied() -> list[str]:
    """What the Dockerfile copies into the image, in order (top-level names, no trailing slash)."""
    return [path.rstrip("/") for line in re.findall(r"^COPY --chown=ray (.+) \S+$", DOCKERFILE, re.M)
            for path in line.split()]


def _job_imports() -> set[str]:
    """Top-level modules of this repository that the job entry points (jobs/, tuning/) import."""
    import ast

    names = set()
    for script in [*(PROJECT_ROOT / "jobs").glob("*.py"), *(PROJECT_ROOT / "tuning").glob("*.py")]:
        for node in ast.walk(ast.parse(script.read_text())):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return names


def test_dockerfile_holds_every_package_and_folder_a_job_needs():
    import tomllib

    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())
    copied = _copied()
    install_line, installed = _project_install()
    copied_before_install = _copied_before(install_line)
    # What pip needs to build the project: its metadata (and the readme it names), the lock.
    assert {"pyproject.toml", "constraints.txt", project["project"]["readme"]} <= set(copied_before_install)
    # Every package the project installs (package-dir roots: platform/ for parabit, pipelines/), before the install:
    # else `pip install .` builds a parabit without them and the parabit.commands entry points point at nothing.
    package_roots = {root.split("/")[0] for root in project["tool"]["setuptools"]["package-dir"].values() if root}
    top_level_packages = {p.parent.name for p in PROJECT_ROOT.glob("*/__init__.py")}
    assert top_level_packages <= package_roots, "a top-level package of the repository is not installed by pyproject"
    assert package_roots <= set(copied_before_install), package_roots - set(copied_before_install)
    entry_modules = {value.split(":")[0].split(".")[0] for value in project["project"]["entry-points"]["parabit.commands"].values()}
    installed_modules = {"parabit"} | top_level_packages
    assert entry_modules <= installed_modules
    # Every project module a job entry point imports is installed in the image.
    repo_modules = {p.name for p in PROJECT_ROOT.iterdir() if p.is_dir()} | {"parabit"}
    assert _job_imports() & repo_modules <= installed_modules
    # The job entry points and what they read from the project folder (configs, sweep spaces, files these name).
    assert {"jobs", "tuning"} <= set(copied)
    for folder in ("jobs/configs", "tuning/spaces"):
        for path in (PROJECT_ROOT / folder).rglob("*.yaml"):
            for value in _strings(yaml.safe_load(path.read_text())):
                if "/" in value and not value.startswith(("/", "~")) and (PROJECT_ROOT / value).is_file():
                    assert value.split("/")[0] in copied, f"{path.relative_to(PROJECT_ROOT)} names {value}, not in the image"
    assert re.search(r"^ENV PARABIT_PROJECT=(\S+)$", DOCKERFILE, re.M)[1] == re.search(r"^WORKDIR (\S+)$", DOCKERFILE, re.M)[1]


def _copied_before(line: str) -> list[str]:
    return [path.rstrip("/") for copy in re.findall(r"^COPY --chown=ray (.+) \S+$", DOCKERFILE[:DOCKERFILE.index(line)], re.M)
            for path in copy.split()]


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _docker_can_build() -> bool:
    import shutil

    if shutil.which("docker") is None:
        return False
    base = f"rayproject/ray:{PINS['ray']}-py311-gpu"
    return subprocess.run(["docker", "image", "inspect", base], capture_output=True).returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(not _docker_can_build(), reason="needs a docker daemon with the Ray base image already pulled "
                                                     "(no network for image pulls here)")
def test_docker_image_builds_and_runs_the_commands(tmp_path):
    tag = "parabit-test:latest"
    built = subprocess.run(["docker", "build", "-f", str(INFRA / "docker" / "Dockerfile"), "-t", tag, str(PROJECT_ROOT)],
                           capture_output=True, text=True, timeout=3600)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    ran = subprocess.run(["docker", "run", "--rm", tag, "parabit", "--help"], capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0 and "backtranslate" in ran.stdout and "sweep" in ran.stdout, ran.stdout + ran.stderr


def test_aws_cluster_has_a_cpu_head_and_an_autoscaling_gpu_group_installed_at_the_same_pins():
    assert AWS["provider"]["type"] == "aws"
    types = AWS["available_node_types"]
    assert AWS["head_node_type"] in types
    assert "GPU" not in types[AWS["head_node_type"]]["resources"]
    gpu = [t for name, t in types.items() if t.get("resources", {}).get("GPU", 0) >= 1]
    assert gpu and all(t["min_workers"] <= t["max_workers"] <= AWS["max_workers"] for t in gpu)
    setup = "\n".join(AWS["setup_commands"])
    assert _pinned_in(setup, "torch") == {PINS["torch"]}
    assert "-c ~/parabit/constraints.txt ~/parabit" in setup
    assert setup.index("torch==") < setup.index("constraints.txt")
    head = " ".join(AWS["head_start_ray_commands"])
    assert "--dashboard-host=127.0.0.1" in head and "--num-cpus=0" in head
    assert AWS["file_mounts"]["~/parabit"] == "."


def test_extra_server_packages_are_pinned_alike_in_image_and_launcher():
    """boto3 at one pin; the PostgreSQL driver and MLflow's login app from the project's server extra (what
    tests/infra/test_tracking_server.py runs the shared server with), not a driver of their own."""
    assert _pinned_in(DOCKERFILE, "boto3") == _pinned_in(AWS_TEXT, "boto3") != set()
    assert "server" in _project_install()[1] and "~/parabit'[server]'" in "\n".join(AWS["setup_commands"])
    assert not re.search(r"pip install .*psycopg2", DOCKERFILE + AWS_TEXT)
