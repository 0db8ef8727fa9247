"""Every command answers a user's mistake the same way (the CLI layer, once): one line on stderr naming the field and
the value, exit code 2, no traceback, and nothing written: no output folder, no MLflow run, no Ray started.

The commands run in this process through ``parabit.cli.run_command`` (what ``parabit`` and every ``jobs/*.py`` call),
with the outputs and the tracking store pointed at fresh folders; ``tests/test_bad_inputs.py`` runs a few of the same
through the job files in a subprocess.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import ray

from parabit.cli import run_command
from parabit.paths import PROJECT_ROOT

CONFIGS = PROJECT_ROOT / "jobs" / "configs"
TRAIN = ["train", "--config", str(CONFIGS / "bilingual_sentences_jpa.yaml")]
BACKTRANSLATE = ["backtranslate", "--config", str(CONFIGS / "backtranslate_slice.yaml")]
SPACE = str(PROJECT_ROOT / "tuning" / "spaces" / "jbi_elgohary.yaml")


def write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text)
    return str(path)


# (command line, with {tmp} for the test's folder; fragments the one line must contain)
CASES = {
    "--set into a value": (TRAIN + ["--set", "name.sub=1"], ["--set name.sub: name is a value", "not a section"]),
    "--set empty key": (TRAIN + ["--set", "=1"], ["--set '=1': the key must be dotted field names"]),
    "--set empty part": (TRAIN + ["--set", "optim..lr=1"], ["the key must be dotted field names"]),
    "--set without =": (TRAIN + ["--set", "optim.lr"], ["--set 'optim.lr' must look like key.path=value"]),
    "--set unknown section": (TRAIN + ["--set", "optimizer.lr=0.1"], ["unknown key 'optimizer'", "valid keys"]),
    "--set unknown field": (TRAIN + ["--set", "optim.learning_rate=0.1"], ["unknown key 'learning_rate' in optim"]),
    "--set wrong type": (TRAIN + ["--set", "optim.epochs=many"], ["optim.epochs: Input should be a valid integer",
                                                                  "(got 'many')"]),
    "--set nan": (TRAIN + ["--set", "optim.lr=nan"], ["optim.lr", "finite"]),
    "--set inf": (TRAIN + ["--set", "objective.margin=.inf"], ["objective.margin", "inf is not a finite number"]),
    "--set negative": (TRAIN + ["--set", "optim.batch_size=-3"], ["optim.batch_size: Input should be greater than or "
                                                                  "equal to 2 (got -3)"]),
    "--set zero epochs": (TRAIN + ["--set", "optim.epochs=0"], ["optim.epochs: Input should be greater than 0"]),
    "nan in free-form options": (TRAIN + ["--set", "model.options.scale=.nan"],
                                 ["model.options.scale: nan is not a finite number"]),
    "unknown encoder": (TRAIN + ["--set", "model.encoder=bert"],
                        ["model.encoder: unknown encoder 'bert'; choose one of"]),
    "checkpoint encoder in a word recipe": (TRAIN + ["--set", "model.encoder=transformer"],
                                            ["model.encoder: the transformer encoder reads a Hugging Face checkpoint"]),
    "unknown objective": (TRAIN + ["--set", "objective.name=triplet"],
                          ["objective.name: unknown pair objective 'triplet'; choose one of ['jbi', 'jpa']"]),
    "unknown recipe": (TRAIN + ["--set", "recipe=cooking"], ["unknown recipe 'cooking'"]),
    "unknown engine": (BACKTRANSLATE + ["--set", "translation.engine=babelfish"],
                       ["unknown translation engine 'babelfish'"]),
    "unknown filter": (["backtranslate", "--config", "{tmp}/filters.yaml"], ["unknown filter 'perplexity'"]),
    "unknown tokenizer": (TRAIN + ["--set", "data.tokenizer=spacy"], ["data.tokenizer: unknown tokenizer 'spacy'"]),
    "unknown dev set": (TRAIN + ["--set", "dev=sts2017"], ["dev: unknown dev set 'sts2017'"]),
    "missing config": (["train", "--config", "{tmp}/absent.yaml"], ["config file", "absent.yaml does not exist"]),
    "config is a folder": (["train", "--config", "{tmp}"], ["is a folder, not a YAML file"]),
    "YAML with a tab": (["train", "--config", "{tmp}/tab.yaml"], ["tab.yaml: not valid YAML"]),
    "YAML list at the top": (["train", "--config", "{tmp}/list.yaml"], ["the top level must be a mapping"]),
    "no --config": (["train"], ["Missing option '--config'"]),
    "unknown option": (TRAIN + ["--frobnicate"], ["No such option '--frobnicate'"]),
    "unknown command": (["trian"], ["No such command 'trian'"]),
    "missing data file": (TRAIN + ["--set", "data.condition=pairs_parquet", "--set", "data.path={tmp}/nowhere.parquet"],
                          ["nowhere.parquet: data.path does not exist"]),
    "sweep: nan in the space": (["sweep", "--space", "{tmp}/space.yaml"], ["space.yaml", "nan is not a finite number"]),
    "sweep: zero trials": (["sweep", "--space", SPACE, "--num-samples", "0"], ["--num-samples", "0"]),
    "sweep: bad --set": (["sweep", "--space", SPACE, "--set", "optim.clip_norm=-1"],
                         ["optim.clip_norm: Input should be greater than 0 (got -1)"]),
    "sweep: --set of a searched parameter": (["sweep", "--space", SPACE, "--set", "optim.lr=0.01"],
                                             ["optim.lr is searched by this space"]),
    "evaluate: unknown baseline": (["evaluate", "--encoder", "glove-max", "--no-mlflow"],
                                   ["unknown baseline encoder 'glove-max'"]),
    "promote: no store": (["promote", "--name", "no-such-model"], ["no MLflow store at sqlite:///{tmp}/mlflow.db"]),
    "replay: no such spool": (["replay", "{tmp}/spool.json"], ["spool file", "spool.json does not exist"]),
    "config check: bad file": (["config", "check", "{tmp}/tab.yaml"], ["tab.yaml: not valid YAML"]),
}


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """Fresh outputs and tracking store, and the files the cases refer to."""
    monkeypatch.setenv("PARABIT_OUTPUT", str(tmp_path / "outputs"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    write(tmp_path, "filters.yaml", "score: {filters: [{name: perplexity}]}\n")
    write(tmp_path, "tab.yaml", "name: x\noptim:\n\tlr: 0.1\n")
    write(tmp_path, "list.yaml", "- 1\n- 2\n")
    write(tmp_path, "space.yaml", f"name: nan-space\nbase_config: {CONFIGS / 'bilingual_sentences.yaml'}\n"
                                  "parameters: {optim.lr: [0.001, .nan]}\n")
    return tmp_path


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_user_mistake_is_one_line_exit_2_and_writes_nothing(case, isolated, capsys):
    argv, fragments = CASES[case]
    was_up = ray.is_initialized()
    code = run_command(argv=[word.replace("{tmp}", str(isolated)) for word in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    for fragment in fragments:
        assert fragment.replace("{tmp}", str(isolated)) in err, err
    assert not (isolated / "outputs").exists() and not (isolated / "mlflow.db").exists()
    assert ray.is_initialized() == was_up  # the mistake was caught before Ray could start


def test_help_exits_0_and_lists_every_job(capsys):
    assert run_command(argv=["--help"]) == 0
    listed = {line.split()[0] for line in capsys.readouterr().out.split("Commands:")[1].splitlines() if line.strip()}
    jobs = {path.stem.replace("_", "-") for path in (PROJECT_ROOT / "jobs").glob("*.py")}
    assert jobs | {"sweep", "promote", "serve", "bildrl-retrieval", "config", "replay"} <= listed
    for command in sorted(listed):
        assert run_command(argv=[command, "--help"]) == 0
        assert capsys.readouterr().out.startswith(f"Usage: parabit {command}")
