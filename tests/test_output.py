"""How much parabit prints: quiet library logs unless verbose, progress bars, and elapsed lines for long steps."""

from __future__ import annotations

import logging
import os
import re
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


def test_a_count_shows_done_of_total_its_rate_and_the_time_left_and_silences_the_elapsed_line(monkeypatch, capsys):
    monkeypatch.setattr(output, "ELAPSED_AFTER_S", 0.2)
    monkeypatch.setattr(output, "LINE_EVERY_S", 0.35)
    with output.elapsed("outer step"):
        items = []
        for item in output.progress(range(5), "counting", unit="items"):  # total: the range's length
            time.sleep(0.15)
            items.append(item)
    lines = capsys.readouterr().err.splitlines()
    assert items == [0, 1, 2, 3, 4]
    assert re.fullmatch(r"counting: [1-4]/5 items \(\d+%\), [\d.]+ items/s, 00:00 elapsed, about 00:0\d left", lines[0])
    assert re.fullmatch(r"counting: 5/5 items \(100%\), [\d.]+ items/s, 00:00 elapsed", lines[-1])
    assert not any("outer step" in line for line in lines)


def test_in_a_log_file_progress_and_log_records_never_share_a_line(monkeypatch, capsys):
    """Where stderr is no terminal (a log file, `ray job logs`), every update is a whole line of its own: a line
    rewritten with \\r would share its line with the log record written in between."""
    monkeypatch.setattr(output, "ELAPSED_AFTER_S", 0.2)
    monkeypatch.setattr(output, "LINE_EVERY_S", 0.2, raising=False)
    output.configure_output(verbose=False)
    with output.elapsed("long step"):
        time.sleep(0.5)
        logging.getLogger("parabit.test").info("halfway there")
        for _ in output.progress(range(3), "counting", total=3, unit="items"):
            time.sleep(0.25)
        time.sleep(0.5)
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = err.splitlines()
    assert len([line for line in lines if line.endswith("INFO parabit.test: halfway there")]) == 1
    assert all(line.startswith(("long step: running for 00:0", "counting: ")) for line in lines
               if "halfway there" not in line)
    assert [line for line in lines if line.startswith("counting: 3/3 items (100%)")]


def test_step_times_record_each_step_and_the_total():
    times = output.StepTimes()
    with times.step("prepare", show_elapsed=False):
        time.sleep(0.05)
    seconds = times.with_total()
    assert seconds["prepare"] >= 0.05
    assert seconds["total"] >= seconds["prepare"] and "earlier_attempts" not in seconds
    resumed = times.with_total(earlier_attempts=120.0)
    assert list(resumed)[-2:] == ["earlier_attempts", "total"] and resumed["earlier_attempts"] == 120.0
    assert resumed["total"] >= seconds["total"] + 120.0


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


class _CpuHolder:
    """An actor that holds every CPU it is given."""

    def ready(self) -> bool:
        return True


@pytest.fixture
def ray_data_warnings():
    """The messages Ray Data's Dataset module logs at WARNING that its logger's filters let through."""
    messages: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    logger, handler = logging.getLogger("ray.data.dataset"), Keep(logging.WARNING)
    logger.addHandler(handler)
    yield messages
    logger.removeHandler(handler)


def test_ray_datas_no_cpu_warning_stands_only_when_no_cpu_frees_up(ray_session, ray_data_warnings):
    """Ray Data warns that a Dataset job "will hang" when a call finds no free CPU, also in the call materialize()
    makes right after the tasks before it ended, before the cluster counts their CPUs as free: that false alarm is
    dropped. A cluster whose CPUs an actor holds (where a Dataset job does wait) still gets Ray Data's warning."""
    from ray.util.debug import reset_log_once

    ray = ray_session
    output.configure_output(verbose=False)
    # What the lagging count produces: the warning, logged while CPUs are free.
    logging.getLogger("ray.data.dataset").warning(
        f"{output.RAY_DATA_NO_CPU_WARNING}. The Dataset job will hang unless more CPUs are freed up.")
    assert ray_data_warnings == []

    holder = ray.remote(num_cpus=ray.cluster_resources()["CPU"])(_CpuHolder).remote()
    try:
        ray.get(holder.ready.remote(), timeout=120)
        deadline = time.monotonic() + 30
        while ray.available_resources().get("CPU") and time.monotonic() < deadline:
            time.sleep(0.1)
        reset_log_once("cpu_warning")  # Ray Data warns once per process: an earlier test may have had it
        ray.data.from_items([1]).materialize()  # already in the object store: checked, nothing to schedule
    finally:
        ray.kill(holder)
    assert [message for message in ray_data_warnings if message.startswith(output.RAY_DATA_NO_CPU_WARNING)]
