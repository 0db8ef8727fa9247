"""Which checkpoint folders a re-run must consider beyond Ray's record, and that a cut-short one is refused."""

from __future__ import annotations

import json

import pytest
import torch

from parabit.training.run import load_state
from parabit.training.checkpointing import CHECKPOINT_FILE, RAY_SNAPSHOT_FILE, IncompleteCheckpoint, \
    newest_loadable, unlisted_checkpoints


def _folders(run, *names):
    for name in names:
        (run / name).mkdir(parents=True)


def test_folders_newer_than_rays_record_are_returned_newest_first(tmp_path):
    _folders(tmp_path, "checkpoint_2026-11-21_20-05-01.044220", "checkpoint_2026-11-21_20-05-01.516021",
             "checkpoint_2026-11-21_20-05-02.100000")
    (tmp_path / RAY_SNAPSHOT_FILE).write_text(json.dumps({"checkpoint_results": [
        {"checkpoint_dir_name": "checkpoint_2026-11-21_20-05-01.044220", "metrics": {"epoch": 1}}]}))
    (tmp_path / "checkpoint_manager_snapshot.json.tmp").write_text("")  # not a checkpoint folder
    assert [p.rsplit("/", 1)[1] for p in unlisted_checkpoints(tmp_path)] == [
        "checkpoint_2026-11-21_20-05-02.100000", "checkpoint_2026-11-21_20-05-01.516021"]


def test_without_a_record_every_folder_counts_and_an_up_to_date_record_leaves_none(tmp_path):
    assert unlisted_checkpoints(tmp_path / "never-ran") == []
    _folders(tmp_path, "checkpoint_a", "checkpoint_b")
    assert [p.rsplit("/", 1)[1] for p in unlisted_checkpoints(tmp_path)] == ["checkpoint_b", "checkpoint_a"]
    (tmp_path / RAY_SNAPSHOT_FILE).write_text(json.dumps({"checkpoint_results": [
        {"checkpoint_dir_name": "checkpoint_a"}, {"checkpoint_dir_name": "checkpoint_b"}]}))
    assert unlisted_checkpoints(tmp_path) == []


def test_a_state_file_cut_short_does_not_load(tmp_path):
    torch.save({"epoch": 3, "model": {"w": torch.arange(10_000.0)}}, tmp_path / CHECKPOINT_FILE)
    assert load_state(tmp_path)["epoch"] == 3
    data = (tmp_path / CHECKPOINT_FILE).read_bytes()
    (tmp_path / CHECKPOINT_FILE).write_bytes(data[: len(data) // 2])
    with pytest.raises(IncompleteCheckpoint, match=f"{tmp_path / CHECKPOINT_FILE}: cannot be read whole"):
        load_state(tmp_path)


def test_resuming_falls_back_past_a_checkpoint_cut_short_by_a_kill(tmp_path, caplog):
    """A worker killed while writing epoch 3's checkpoint leaves a half file: resume from epoch 2's, with a warning."""
    older, newer = tmp_path / "checkpoint_2026-01-01_00-00-01", tmp_path / "checkpoint_2026-01-01_00-00-02"
    for folder, epoch in ((older, 2), (newer, 3)):
        folder.mkdir()
        torch.save({"epoch": epoch, "model": {"w": torch.arange(10_000.0)}}, folder / CHECKPOINT_FILE)
    data = (newer / CHECKPOINT_FILE).read_bytes()
    (newer / CHECKPOINT_FILE).write_bytes(data[: len(data) // 3])

    folders = unlisted_checkpoints(tmp_path)
    assert folders == [str(newer), str(older)]
    state, folder = newest_loadable(folders)
    assert (state["epoch"], folder) == (2, str(older))
    assert f"not resuming from {newer}: it is incomplete" in caplog.text
    (older / CHECKPOINT_FILE).unlink()
    assert newest_loadable(folders) is None  # nothing loads: a fresh start, not a crash
