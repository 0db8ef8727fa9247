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


def undescribed_fields(schema: dict) -> list[str]:
    """``Class.field`` of every property in ``schema`` (and its ``$defs``) that has no description."""
    models = {schema.get("title", "?"): schema, **{name: d for name, d in schema.get("$defs", {}).items()}}
    return [f"{name}.{field}" for name, model in models.items()
            for field, spec in model.get("properties", {}).items() if not spec.get("description")]


def test_every_field_of_every_kind_has_a_description_in_its_schema():
    missing = sorted({field for kind in CONFIG_KINDS
                      for field in undescribed_fields(json.loads(CliRunner().invoke(config, ["schema", kind]).output))})
    assert not missing, f"{len(missing)} config fields without a docstring: {missing}"
