"""How much parabit prints: quiet library logs unless verbose, progress bars, and elapsed lines for long steps."""

from __future__ import annotations

import logging
import os
import time

import pytest

from parabit import output


@pytest.fixture
def restore_environment():
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)
    output.configure_output(verbose=False)


def test_quiet_by_default_the_libraries_log_at_warning(restore_environment, monkeypatch):
    monkeypatch.delenv("RAY_DATA_LOG_LEVEL", raising=False)
    output.configure_output(verbose=False)
    assert os.environ["RAY_DATA_LOG_LEVEL"] == "WARNING"
    assert os.environ["MLFLOW_LOGGING_LEVEL"] == "WARNING"
    assert logging.getLogger("ray").level == logging.WARNING
    assert logging.getLogger("parabit").level == logging.INFO
    assert output.worker_env()[output.VERBOSE_ENV] == "0"
    assert output.library_log_level() == logging.WARNING


def test_verbose_leaves_the_libraries_at_their_own_levels(restore_environment, monkeypatch):
    monkeypatch.delenv("RAY_DATA_LOG_LEVEL", raising=False)
    output.configure_output(verbose=True)
    assert output.quiet_env() == {}
    assert "RAY_DATA_LOG_LEVEL" not in os.environ
    assert logging.getLogger("ray").level == logging.INFO
    assert output.worker_env() == {output.VERBOSE_ENV: "1"}


def test_a_level_the_user_set_wins(restore_environment, monkeypatch):
    monkeypatch.setenv("MLFLOW_LOGGING_LEVEL", "DEBUG")
    output.configure_output(verbose=False)
    assert os.environ["MLFLOW_LOGGING_LEVEL"] == "DEBUG"


def test_a_step_shows_its_elapsed_time_only_once_it_is_long(monkeypatch, capsys):
    monkeypatch.setattr(output, "ELAPSED_AFTER_S", 0.3)
    with output.elapsed("quick step"):
        pass
    with output.elapsed("long step"):
        time.sleep(1.0)
    err = capsys.readouterr().err
    assert "quick step" not in err
    assert "long step: running for 00:0" in err
    assert err.endswith("\n")  # the line is finished, so the next log starts on its own line


def test_a_progress_bar_counts_every_item_and_silences_the_elapsed_line(monkeypatch, capsys):
    monkeypatch.setattr(output, "ELAPSED_AFTER_S", 0.2)
    with output.elapsed("outer step"):
        items = []
        for item in output.progress(range(5), "counting", unit="item"):
            time.sleep(0.15)
            items.append(item)
    err = capsys.readouterr().err
    assert items == [0, 1, 2, 3, 4]
    assert "counting: 100%" in err and "5/5" in err
    assert "outer step" not in err


def test_step_times_record_each_step_and_the_total():
    times = output.StepTimes()
    with times.step("prepare", show_elapsed=False):
        time.sleep(0.05)
    seconds = times.with_total()
    assert seconds["prepare"] >= 0.05
    assert seconds["total"] >= seconds["prepare"]


def test_a_log_record_during_a_long_step_starts_its_own_line(monkeypatch, capsys):
    monkeypatch.setattr(output, "ELAPSED_AFTER_S", 0.2)
    output.configure_output(verbose=False)
    with output.elapsed("long step"):
        time.sleep(0.5)
        logging.getLogger("parabit.test").info("halfway there")
        time.sleep(0.3)
    lines = capsys.readouterr().err.replace("\r", "\n").splitlines()
    assert any(line.endswith("halfway there") for line in lines)
    assert not any("running for" in line and "halfway" in line for line in lines)


def test_a_fault_ray_logs_with_a_traceback_is_one_line_on_the_console_and_whole_in_the_file(restore_environment,
                                                                                            tmp_path, capsys):
    output.configure_output(verbose=False)
    logger = logging.getLogger("parabit-test.faults")
    logger.propagate = False
    console, file = logging.StreamHandler(), logging.FileHandler(tmp_path / "train.log")
    console.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger.handlers = [file, console]
    output.one_line_console("parabit-test.faults")
    try:
        raise RuntimeError("Read error [127.0.0.1]:5551: Connection reset by peer\nmore detail")
    except RuntimeError:
        logger.exception("Error in training function:")
    logger.error("Error in training function:\nTraceback (most recent call last):\n  File ...\nValueError: bad")
    file.close()

    assert capsys.readouterr().err.splitlines() == [
        "ERROR Error in training function: (RuntimeError: Read error [127.0.0.1]:5551: Connection reset by peer)",
        "ERROR Error in training function: ValueError: bad"]
    written = (tmp_path / "train.log").read_text()
    assert "Traceback (most recent call last)" in written and "more detail" in written
