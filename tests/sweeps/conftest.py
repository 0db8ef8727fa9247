import json

import pytest
import yaml

from parabit.config import to_dict
from parabit.training import ScalingSettings


@pytest.fixture
def write_space(tmp_path, small_config):
    """Write a small base config and a space over it; returns the space file's path."""

    def write(name: str, parameters: dict, **settings) -> str:
        base = small_config(scaling=ScalingSettings(num_workers=1, cpus_per_worker=0.45))
        base.tracking.experiment = "sweep-tests"
        base.tracking.register_as = f"parabit-{name}"
        base_path = tmp_path / f"{name}-base.yaml"
        base_path.write_text(yaml.safe_dump(json.loads(json.dumps(to_dict(base)))))
        space = {"name": name, "base_config": str(base_path), "parameters": parameters,
                 "fixed": settings.pop("fixed", {}), **settings}
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(space))
        return str(path)

    return write
