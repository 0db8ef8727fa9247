"""``parabit config schema``: every kind of config a command reads, each training recipe's included."""

import json

from click.testing import CliRunner

from parabit.cli.configs import CONFIG_KINDS, config
from parabit.recipes import RECIPES


def test_every_recipe_is_a_kind_and_every_kind_prints_its_json_schema():
    assert set(RECIPES) <= set(CONFIG_KINDS)
    runner = CliRunner()
    for kind in CONFIG_KINDS:
        printed = runner.invoke(config, ["schema", kind])
        assert printed.exit_code == 0, (kind, printed.output[-2000:])
        schema = json.loads(printed.output)
        assert schema["type"] == "object" and schema["properties"], kind
