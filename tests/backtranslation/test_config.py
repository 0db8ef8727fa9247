"""A wrong pipeline configuration fails when it is loaded, before any data is read, saying what to fix."""

from __future__ import annotations

import pytest
import yaml

from parabit.cli import run_command
from parabit.config import ConfigError, load_config
from parabit.paths import PROJECT_ROOT
from parabit.backtranslation import PipelineConfig

JOB_CONFIGS = [PROJECT_ROOT / "jobs" / "configs" / name for name in ("backtranslate_slice.yaml",
                                                                     "backtranslate_tatoeba.yaml")]


@pytest.mark.parametrize("path", JOB_CONFIGS)
def test_shipped_configs_load(path):
    config = load_config(PipelineConfig, path)
    assert config.translation.engine == "apertium"


@pytest.mark.parametrize("section, message", [
    ({"score": {"filters": [{"name": "perplexity"}]}}, r"unknown filter 'perplexity'; choose one of"),
    ({"score": {"filters": [{"name": "bleu", "thresholds": {"min": 0.1}}]}}, r"no threshold\(s\) \['min'\]"),
    ({"score": {"filters": [{"name": "ngram_overlap", "options": {"size": 2}}]}}, r"bad options"),
    ({"score": {"filters": [{"name": "translation_cost"}]}}, r"does not provide; remove them"),
    ({"translation": {"engine": "babelfish"}}, r"unknown translation engine 'babelfish'"),
    ({"translation": {"options": {"mode": "spa-xyz"}}}, r"cannot translate es->en; use mode 'spa-eng'"),
    ({"translation": {"options": {"mode": "fra-eng"}, "direction": "fr-en"}}, r"apertium-eng-spa"),
    ({"sources": [{"format": "csv", "path": "x.csv"}]}, r"sources\[0\].format: Input should be 'tatoeba'"),
    ({"select": {"sample_size": 0}}, r"select.sample_size: Input should be greater than 0 \(got 0\)"),
    ({"sources": [{"lang": "de"}]}, r"no shipped Tatoeba file for lang 'de'"),
    ({"sources": [{"path": "a/spa.txt.gz"}, {"path": "b/spa.txt.gz"}]}, r"distinct file names"),
])
def test_bad_config_fails_at_load(tmp_path, section, message):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(section))
    with pytest.raises(ConfigError, match=message):
        load_config(PipelineConfig, path)


def test_bad_config_stops_the_job_before_it_starts(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("score: {filters: [{name: perplexity}]}\n")
    assert run_command(argv=["backtranslate", "--config", str(path)]) == 2
    assert "unknown filter 'perplexity'" in capsys.readouterr().err


def test_two_shipped_tatoeba_sources_are_two_files():
    # Without `path` each reads its language's shipped file: distinct names, so distinct row ids.
    config = PipelineConfig(sources=[{"lang": "es"}, {"lang": "fr"}],
                            translation={"mode": "roundtrip", "direction": "en-pt-en", "engine": "marian-pt",
                                         "options": {}})
    assert [source.file.name for source in config.sources] == ["spa.txt.gz", "fra.txt.gz"]
