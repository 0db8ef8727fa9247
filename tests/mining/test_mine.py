"""Bitext mining (``parabit mine``) end to end on real data: 300 held-out Tatoeba es–en pairs, the English side
shuffled, embedded by Ray Data batch inference (an actor pool) with a real bilingual model and paired by LASER's ratio
margin. Checks that most true pairs come back at high precision, that every line and candidate is accounted for, that
a re-run resumes (complete stages skipped, a new threshold recomputes only the pairs), and that bad piles are one
clear line.

The model is the bilingual recipe's ``aligned`` start over the GloVe-SIF base: each Spanish word placed at the
vectors of its likeliest English translations under IBM Model 1, fitted on 20,000 Tatoeba pairs that exclude the
held-out sets. It is a real en–es model (on these piles it finds more true pairs than the recipe's 2-epoch Ray Train
run on 3,000 pairs does) and needs no Ray Train run, which keeps this module within its time on a 2-core machine.
"""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from mlflow.tracking import MlflowClient

import pipelines.mine
from parabit.backtranslation.run import OUTPUT_TAG
from parabit.backtranslation.stage import MANIFEST, read_parquet_dir
from parabit.cli import run_command
from parabit.config import ConfigError, from_dict
from parabit.data.heldout import HeldoutSets
from parabit.mining import MineConfig
from parabit.mining.stages import BELOW_THRESHOLD, LOST_SIDE, greedy_one_to_one

from ..bilingual_support import glove_sif_base, small_config, untrained_bilingual

PAIRS = 300
# Bad lines of the English pile (the Spanish one has none, as in the shipped Europarl sample).
EMPTY_LINE = 151
LONG_LINE = 41  # over the 2,000 characters a sentence may have
THRESHOLD = 1.1


@dataclass(frozen=True)
class Piles:
    spanish: Path
    english: Path
    truth: frozenset[tuple[str, str]]  # the (Spanish, English) translation pairs hidden in the piles


@pytest.fixture(scope="module")
def model(outputs) -> Path:
    """A real en–es bilingual model as an embedder folder (see the module docstring)."""
    base = glove_sif_base(outputs / "glove-sif-base")
    config = small_config("bilingual-aligned", base, outputs, model={"foreign_init": "aligned"},
                          data={"max_pairs": 20_000})
    return untrained_bilingual(config, outputs / "bilingual-aligned")


@pytest.fixture(scope="module")
def piles(tmp_path_factory) -> Piles:
    """The first 300 held-out Tatoeba test pairs as two piles: the Spanish in order, the English shuffled (seeded)
    with an over-long line at line 41 and an empty one at line 151."""
    pairs = HeldoutSets.load().tatoeba_test[:PAIRS]
    spanish = [p.foreign for p in pairs]
    english = [p.en for p in pairs]
    assert len(set(spanish)) == len(set(english)) == PAIRS  # each sentence has exactly one translation
    random.Random(7).shuffle(english)
    english.insert(LONG_LINE - 1, "word " * 500)
    english.insert(EMPTY_LINE - 1, "")
    folder = tmp_path_factory.mktemp("piles")
    (folder / "tatoeba.es").write_text("\n".join(spanish) + "\n")
    (folder / "tatoeba.en").write_text("\n".join(english) + "\n")
    return Piles(folder / "tatoeba.es", folder / "tatoeba.en", frozenset((p.foreign, p.en) for p in pairs))


def settings(model: Path | str, piles: Piles, output_dir: Path, **changes) -> dict:
    """A mining config (as YAML would hold it): both piles, 2 actors of 0.5 CPU, batches of 128 sentences."""
    return {"name": "mine-tatoeba", "output_dir": str(output_dir), "experiment": "test-pipelines",
            "model": str(model), "source": {"path": str(piles.spanish), "lang": "es"},
            "target": {"path": str(piles.english), "lang": "en"}, "actors": 2, "cpus_per_actor": 0.5,
            "batch_size": 128, **changes}


@pytest.fixture(scope="module")
def mined(ray_session, model, piles, tmp_path_factory):
    """One mining run over the piles (its pipeline result); tests that run again do so on a copy of its folder."""
    return pipelines.mine.run(from_dict(MineConfig, settings(model, piles, tmp_path_factory.mktemp("mine") / "out")))


def copy_of(result, folder: Path) -> Path:
    """A copy of a mining run's output folder (``<folder>/pairs/data/pairs.parquet`` is the result's output)."""
    return Path(shutil.copytree(result.output.parents[2], folder))


def manifests(root: Path) -> dict[str, str]:
    return {stage: (root / stage / MANIFEST).read_text() for stage in ("embed", "pairs")}


def precision(pairs: dict, truth: frozenset) -> float:
    return float(np.mean([pair in truth for pair in zip(pairs["source_text"], pairs["target_text"])]))


@pytest.mark.slow
def test_mining_shuffled_tatoeba_recovers_most_true_pairs_at_high_precision(mined, piles):
    """Of 300 hidden translation pairs, at least 70% are mined, at least 85% of the mined pairs are true ones, and the
    best-scored half (the file is written best first) is at least 95% true; each sentence is in at most one pair,
    and every pair's line numbers point at its sentences in the pile files."""
    pairs = pq.read_table(mined.output).to_pydict()
    correct = sum(pair in piles.truth for pair in zip(pairs["source_text"], pairs["target_text"]))
    assert correct >= 0.70 * PAIRS, (correct, len(pairs["margin"]))
    assert precision(pairs, piles.truth) >= 0.85
    best = {column: values[: len(values) // 2] for column, values in pairs.items()}
    assert precision(best, piles.truth) >= 0.95
    assert pairs["margin"] == sorted(pairs["margin"], reverse=True)
    assert min(best["margin"]) > 1  # a true pair stands out from both neighbourhoods
    assert len(set(pairs["source_text"])) == len(set(pairs["target_text"])) == len(pairs["margin"])
    spanish, english = piles.spanish.read_text().splitlines(), piles.english.read_text().splitlines()
    assert all(spanish[line - 1] == text for line, text in zip(pairs["source_line"], pairs["source_text"]))
    assert all(english[line - 1] == text for line, text in zip(pairs["target_line"], pairs["target_text"]))
    cosines = np.asarray(pairs["cosine"])
    assert np.all((cosines > -1) & (cosines <= 1))


@pytest.mark.slow
def test_every_line_and_every_candidate_pair_is_accounted_for(mined):
    """``embed``: the 602 lines in are 600 sentences out plus the English pile's empty and over-long line, each
    rejected with its reason and line (the Spanish pile has none, and the two piles' rejects still combine);
    ``pairs``: every candidate is a pair out or a reject saying a better pair holds one of its sentences. The MLflow
    run records the counts and points at the pairs file."""
    embed, pairs = mined.stages["embed"], mined.stages["pairs"]
    assert (embed.rows_in, embed.rows_out, embed.rows_rejected) == (2 * PAIRS + 2, 2 * PAIRS, 2)
    assert embed.reject_reasons == {"empty English line": 1, "English line longer than 2000 characters": 1}
    rejected = read_parquet_dir(embed.rejects).to_pydict()
    assert sorted(zip(rejected["source"], rejected["line"])) == [("target/tatoeba.en", LONG_LINE),
                                                                 ("target/tatoeba.en", EMPTY_LINE)]
    assert pairs.rows_in == pairs.rows_out + pairs.rows_rejected and pairs.rows_out > 0.7 * PAIRS
    assert set(pairs.reject_reasons) <= {LOST_SIDE} and pairs.rows_rejected > 0
    assert pq.read_table(mined.output).num_rows == pairs.rows_out

    run = MlflowClient().get_run(mined.run_id)
    assert run.info.status == "FINISHED" and run.data.tags[OUTPUT_TAG] == str(mined.output)
    assert run.data.metrics["pairs.rows_out"] == pairs.rows_out
    assert run.data.metrics["embed.rows_rejected"] == 2


@pytest.mark.slow
def test_a_rerun_of_the_command_skips_both_complete_stages(mined, model, piles, tmp_path, capsys):
    """``parabit mine`` on a complete output folder recomputes nothing: both stages' manifests (which record when
    and how long each ran) are unchanged, and the command prints the stage table and where the pairs are."""
    root = copy_of(mined, tmp_path / "out")
    before = manifests(root)
    config = tmp_path / "mine.yaml"
    config.write_text(yaml.safe_dump(settings(model, piles, root)))
    assert run_command(argv=["mine", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert manifests(root) == before
    assert f"mined pairs: {root / 'pairs' / 'data' / 'pairs.parquet'} ({mined.stages['pairs'].rows_out} pairs of " \
           f"{2 * PAIRS} sentences" in out
    assert out.splitlines()[0].split()[:4] == ["stage", "rows", "in", "rows"]


@pytest.mark.slow
def test_a_new_threshold_recomputes_only_the_pairs_and_keeps_the_pairs_above_it(mined, model, piles, tmp_path):
    """With ``threshold`` set, the embeddings are reused (same manifest) and the pairs stage runs again: it keeps
    exactly the earlier pairs whose margin reaches the threshold, rejects the others with that reason, and the kept
    ones are at least 93% true."""
    root = copy_of(mined, tmp_path / "out")
    before = manifests(root)
    earlier = pq.read_table(mined.output).to_pydict()
    result = pipelines.mine.run(from_dict(MineConfig, settings(model, piles, root, threshold=THRESHOLD)))
    after = manifests(root)
    assert after["embed"] == before["embed"] and after["pairs"] != before["pairs"]
    kept = pq.read_table(result.output).to_pydict()
    above = [(s, t) for s, t, m in zip(earlier["source_text"], earlier["target_text"], earlier["margin"])
             if m >= THRESHOLD]
    assert list(zip(kept["source_text"], kept["target_text"])) == above and min(kept["margin"]) >= THRESHOLD
    pairs = result.stages["pairs"]
    assert pairs.reject_reasons[BELOW_THRESHOLD] == len(earlier["margin"]) - len(above) > 0
    assert pairs.rows_in == mined.stages["pairs"].rows_in  # the same candidates
    assert precision(kept, piles.truth) >= 0.93


def bad_piles(folder: Path, piles: Piles) -> dict[str, tuple[dict, str]]:
    """Piles a user might get wrong: (the config's target side, what the one line must say)."""
    (folder / "blank.en").write_text("\n   \n\n")
    return {
        "missing file": ({"path": str(folder / "absent.en"), "lang": "en"}, f"{folder / 'absent.en'}: file does not "
                                                                             "exist"),
        "no usable line": ({"path": str(folder / "blank.en"), "lang": "en"}, f"{folder / 'blank.en'}: no line to "
                                                                             "mine (rejected: 3 × empty English line)"),
    }


@pytest.mark.parametrize("case", ["missing file", "no usable line"])
def test_a_bad_pile_is_one_line_naming_the_file_and_exit_2(case, ray_session, model, piles, tmp_path, capsys):
    """A target pile that does not exist, or holds only blank lines, stops ``parabit mine`` with one line on stderr
    naming the file and exit code 2 (a user's mistake, no traceback)."""
    target, message = bad_piles(tmp_path, piles)[case]
    config = tmp_path / "mine.yaml"
    config.write_text(yaml.safe_dump(settings(model, piles, tmp_path / "out", target=target)))
    code = run_command(argv=["mine", "--config", str(config)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err


def test_an_unknown_registered_model_is_one_line_and_exit_2(ray_session, piles, tmp_path, capsys):
    """A model name or alias that the registry does not hold should stop ``parabit mine`` as ``train`` and ``serve``
    do: one line naming the model and what the registry has, exit code 2."""
    config = tmp_path / "mine.yaml"
    config.write_text(yaml.safe_dump(settings("models:/no-such-model@champion", piles, tmp_path / "out")))
    code = run_command(argv=["mine", "--config", str(config)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "model 'models:/no-such-model@champion'" in err, err


def test_greedy_one_to_one_takes_the_best_pair_first_and_each_sentence_once():
    """Candidates (x, y, score), best first: (0, 0, 1.5) is taken; (1, 0, 1.4) loses y=0 to it; (2, 1, 1.3) is
    taken; (1, 1, 1.2) then finds y=1 held, so x=1 stays unpaired (greedy, as LASER mines, not an optimal matching)."""
    x = np.array([0, 1, 1, 2])
    y = np.array([0, 0, 1, 1])
    scores = np.array([1.5, 1.4, 1.2, 1.3])
    assert greedy_one_to_one(x, y, scores).tolist() == [True, False, False, True]


@pytest.mark.parametrize(("change", "fragment"), [
    ({"k": 0}, "k: Input should be greater than 0"),
    ({"name": "a/b"}, "name: String should match pattern"),
    ({"source": {"path": "x.es"}}, "source.lang: Field required"),
    ({"threshold": -1}, "threshold: Input should be greater than 0"),
])
def test_a_wrong_mine_config_names_the_field(change, fragment):
    """A mining config is checked when loaded: the one-line error names the field that is wrong."""
    base = {"source": {"path": "x.es", "lang": "es"}, "target": {"path": "x.en", "lang": "en"}}
    with pytest.raises(ConfigError, match=fragment.replace("(", r"\(")) as err:
        from_dict(MineConfig, {**base, **change})
    assert "\n" not in str(err.value)
