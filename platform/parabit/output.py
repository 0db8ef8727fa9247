"""How much parabit prints, in the driver and in every Ray worker.

By default a command prints what its user needs (parabit's own progress, per-epoch lines, tables, run ids) and the
libraries underneath speak only at WARNING: Ray, Ray Data, Ray Train and MLflow each read their level from their own
environment variable when they are imported, so :func:`quiet_env` is set in the driver before they load and handed to
every worker through the runtime environment (:mod:`parabit.ray_runtime`). ``--verbose`` (``PARABIT_VERBOSE=1``)
leaves all of them at their own defaults.

Progress follows the ecosystem: Ray Data's own bars where stdout is a terminal, ``tqdm`` bars for driver-side loops,
and, where output goes to a file or ``ray job logs`` (no terminal, where Ray Data logs a ten-line block every 10 s),
one self-updating ``tqdm`` line per step that has run longer than 10 s (:func:`elapsed`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator

from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

VERBOSE_ENV = "PARABIT_VERBOSE"

# Seconds a step runs before it shows an elapsed-time line (shorter steps print only their result).
ELAPSED_AFTER_S = 10.0

LIBRARY_LOGGERS = ("ray", "mlflow", "alembic", "urllib3", "filelock", "py.warnings")


def is_verbose() -> bool:
    return os.environ.get(VERBOSE_ENV) == "1"


def quiet_env() -> dict[str, str]:
    """The variables that keep the libraries' own logs at WARNING (empty when verbose). A value the user has set
    in this process's environment wins."""
    if is_verbose():
        return {}
    quiet = {
        "RAY_DATA_LOG_LEVEL": "WARNING",
        "MLFLOW_LOGGING_LEVEL": "WARNING",
        "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false",
        # Ray's deprecation notices are for Ray's own callers; they say nothing a parabit user can act on.
        "PYTHONWARNINGS": "ignore::DeprecationWarning",
    }
    return {name: os.environ.get(name, value) for name, value in quiet.items()}


def worker_env() -> dict[str, str]:
    """What a Ray worker needs to print as this driver does: :func:`quiet_env` and the verbosity itself."""
    return {VERBOSE_ENV: "1" if is_verbose() else "0"} | quiet_env()


def configure_worker_output() -> None:
    """In a Ray worker: parabit's logs at INFO; Ray's INFO records that bypass Ray Train's ``LoggingConfig`` (some are
    logged under a file-path name, a child of the root logger) only when verbose; Ray Train's error records one line
    each on the console (:func:`one_line_console`)."""
    if not is_verbose():
        logging.getLogger().setLevel(logging.WARNING)
        logging.getLogger("parabit").setLevel(logging.INFO)
        one_line_console("ray.train")
        one_line_console("")


class OneLineFormatter(logging.Formatter):
    """Formats a record as its message's first line, and its exception as ``Type: first line``, through the formatter
    it wraps; the record itself is left whole for the handlers after it."""

    def __init__(self, inner: logging.Formatter | None):
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        lines = [line for line in record.getMessage().splitlines() if line.strip()]
        # A traceback formatted into the message ends with the error itself.
        summary = " ".join(lines[:1] + lines[-1:]) if len(lines) > 1 else "".join(lines)
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            detail = (str(error).splitlines() or [""])[0]
            if detail not in summary:
                summary = f"{summary} ({type(error).__name__}: {detail})" if summary else \
                    f"{type(error).__name__}: {detail}"
        shown = logging.makeLogRecord({**record.__dict__, "msg": summary, "args": None, "exc_info": None,
                                       "exc_text": None, "stack_info": None})
        return self.inner.format(shown)


def one_line_console(logger_name: str) -> None:
    """Ray Train logs each fault it recovers from (a lost node's broken connections, a placement it retries) with a
    whole traceback, on the console of every worker and of its controller; with several workers and retries that
    is pages. On the console of ``logger_name`` each record becomes one line; the full records stay in Ray Train's
    own log files (``logs/train/`` of the session). Not when verbose."""
    if is_verbose():
        return
    for handler in logging.getLogger(logger_name).handlers:
        if not isinstance(handler, logging.StreamHandler) or isinstance(handler, logging.FileHandler):
            continue
        # Ray's console handler writes through an inner handler of its own inside Ray workers.
        for console in (handler, getattr(handler, "plain_handler", None)):
            if console is not None and not isinstance(console.formatter, OneLineFormatter):
                console.setFormatter(OneLineFormatter(console.formatter))


def configure_output(verbose: bool) -> None:
    """parabit's own progress at INFO; the libraries' logs at WARNING unless ``verbose``. Call it before a command
    imports Ray or MLflow (they read their levels at import); what is already imported is set here too."""
    os.environ[VERBOSE_ENV] = "1" if verbose else "0"
    os.environ.update(quiet_env())
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", force=True)
    logging.getLogger("parabit").setLevel(logging.INFO)
    for name in LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO if verbose else logging.WARNING)


def library_log_level() -> int:
    """The level Ray and Ray Train log at in this run."""
    return logging.INFO if is_verbose() else logging.WARNING


_open_bars = 0  # progress() bars now showing; elapsed() stays silent under one (it would overwrite its line)


def progress(iterable: Iterable, description: str, total: int | None = None, unit: str = "it") -> Iterator:
    """``iterable`` with a ``tqdm`` bar on stderr (refreshed every few seconds when stderr is not a terminal, so a
    log file gets a handful of updates on one line rather than thousands)."""
    global _open_bars
    interactive = sys.stderr.isatty()
    with tqdm(iterable, desc=description, total=total, unit=unit, file=sys.stderr, dynamic_ncols=interactive,
              mininterval=0.2 if interactive else 5.0) as bar:
        _open_bars += 1
        try:
            yield from bar
        finally:
            _open_bars -= 1


@contextlib.contextmanager
def elapsed(description: str) -> Iterator[None]:
    """Show ``description: <elapsed>`` once the enclosed step has run :data:`ELAPSED_AFTER_S`, refreshed until it
    ends. Only where stderr is not a terminal: in a terminal Ray Data's own bars show the step's progress."""
    if sys.stderr.isatty():
        yield
        return
    done = threading.Event()
    started = time.time()

    def show() -> None:
        if done.wait(ELAPSED_AFTER_S):
            return
        while _open_bars:  # the step shows its own progress
            if done.wait(ELAPSED_AFTER_S):
                return
        with tqdm(desc=description, bar_format="{desc}: running for {elapsed}", file=sys.stderr,
                  delay=ELAPSED_AFTER_S) as bar:
            bar.start_t = started  # the step's time, not the bar's
            while True:
                bar.refresh()
                if done.wait(ELAPSED_AFTER_S):
                    break

    thread = threading.Thread(target=show, name=f"elapsed {description}", daemon=True)
    thread.start()
    try:
        with logging_redirect_tqdm():  # a log record mid-step goes on its own line, not onto the elapsed line
            yield
    finally:
        done.set()
        thread.join()


class StepTimes:
    """Seconds taken by each named step of a command (and in total), each step showing :func:`elapsed` while it
    runs unless it prints its own progress."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._started = time.perf_counter()

    @contextlib.contextmanager
    def step(self, name: str, show_elapsed: bool = True) -> Iterator[None]:
        mark = time.perf_counter()
        with elapsed(name.replace("_", " ")) if show_elapsed else contextlib.nullcontext():
            yield
        self.seconds[name] = time.perf_counter() - mark

    def with_total(self) -> dict[str, float]:
        return {**self.seconds, "total": time.perf_counter() - self._started}
