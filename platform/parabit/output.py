"""How much parabit prints, in the driver and in every Ray worker.

By default a command prints what its user needs (parabit's own progress, per-epoch lines, tables, run ids) and the
libraries underneath speak only at WARNING: Ray, Ray Data, Ray Train and MLflow each read their level from their own
environment variable when they are imported, so :func:`quiet_env` is set in the driver before they load and handed to
every worker through the runtime environment (:mod:`parabit.ray_runtime`). ``--verbose`` (``PARABIT_VERBOSE=1``)
leaves all of them at their own defaults.

Progress follows the ecosystem: in a terminal, Ray Data's own bars for the steps Ray Data runs and ``tqdm`` bars for
driver-side loops (:func:`counting`, :func:`progress`: how many of how many, the rate and the time left). Where output
goes to a file or ``ray job logs`` (no terminal, where Ray Data would log a ten-line block every 10 s), every counted
step writes one whole line every :data:`LINE_EVERY_S` and one when it ends, and a step without a count says how long it
has run (:func:`elapsed`): never a line rewritten with ``\r``, which in a file shares its line with the next log record.
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
# Where stderr is no terminal: seconds between two progress lines of one step.
LINE_EVERY_S = 30.0
# How Ray Data's warning starts when a Dataset call finds no free CPU (see NoFreeCpuFilter).
RAY_DATA_NO_CPU_WARNING = "Warning: The Ray cluster currently does not have any available CPUs"
# How long NoFreeCpuFilter waits for a CPU to show as free before it lets the warning through.
NO_CPU_RECHECK_S = 2.0

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
    each on the console (:func:`one_line_console`); Ray Data's false no-CPU alarm dropped (:class:`NoFreeCpuFilter`)."""
    drop_false_cpu_alarms()
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


class NoFreeCpuFilter(logging.Filter):
    """Drops Ray Data's warning "The Ray cluster currently does not have any available CPUs. The Dataset job will
    hang unless more CPUs are freed up..." when it is a false alarm, and lets it through when it is true.

    Ray Data checks ``ray.available_resources()`` as every Dataset call that executes starts, and once more inside
    ``materialize()`` (which also ends every ``write_*``) in a call that schedules nothing, milliseconds after the
    tasks of the execution before it ended. The cluster's count of free CPUs lags those tasks' ends: on a loaded
    2-core machine the score stage (as it was: ``materialize`` then two ``write_parquet``) read no free CPU there,
    after its last write, in 3 of 13 runs, and every run went on without waiting. So the warning stands only if no CPU
    is free within :data:`NO_CPU_RECHECK_S` (a cluster held by actors or Tune trials, where a Dataset job does wait);
    Ray Data shows it once per process."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.getMessage().startswith(RAY_DATA_NO_CPU_WARNING):
            return True
        import ray

        deadline = time.monotonic() + NO_CPU_RECHECK_S
        while time.monotonic() < deadline:
            if ray.available_resources().get("CPU"):
                logging.getLogger(__name__).debug("Ray Data's no-CPU warning dropped: CPUs were free again")
                return False
            time.sleep(0.05)
        return True


def drop_false_cpu_alarms() -> None:
    """Attach :class:`NoFreeCpuFilter` to the logger Ray Data warns on (once; it outlives Ray Data's own logging
    set-up, which configures only the ``ray.data`` logger above it)."""
    logger = logging.getLogger("ray.data.dataset")
    if not any(isinstance(f, NoFreeCpuFilter) for f in logger.filters):
        logger.addFilter(NoFreeCpuFilter())


def configure_output(verbose: bool) -> None:
    """parabit's own progress at INFO; the libraries' logs at WARNING unless ``verbose``. Call it before a command
    imports Ray or MLflow (they read their levels at import); what is already imported is set here too."""
    drop_false_cpu_alarms()
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


_open_bars = 0  # counted steps now showing; elapsed() stays silent under one (the count says more)


def _write_line(text: str) -> None:
    """``text`` and its newline to stderr in one write: ``print`` writes them apart, and a log record written from
    another thread in between would share the line."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


class _Lines:
    """The count of a step where stderr is no terminal: one whole line every :data:`LINE_EVERY_S` (from a thread
    of its own, so a step whose first results take long still says so) and one at the end, each with the count,
    the rate and the time left."""

    def __init__(self, description: str, total: int | None, unit: str):
        self.description, self.total, self.unit = description, total, unit
        self.done = 0
        self.started = time.monotonic()
        self._ended = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name=f"progress {description}", daemon=True)
        self._ticker.start()

    def update(self, n: int = 1) -> None:
        self.done += n

    def _tick(self) -> None:
        while not self._ended.wait(LINE_EVERY_S):
            self.show()

    def close(self) -> None:
        self._ended.set()
        self._ticker.join()
        self.show()

    def show(self) -> None:
        seconds = time.monotonic() - self.started
        rate = self.done / seconds if seconds > 0 else 0.0
        count = f"{self.done:,}/{self.total:,} {self.unit} ({self.done / self.total:.0%})" if self.total \
            else f"{self.done:,} {self.unit}"
        parts = [f"{self.description}: {count}", f"{rate:,.1f} {self.unit}/s",
                 f"{tqdm.format_interval(seconds)} elapsed"]
        if self.total and rate > 0 and self.done < self.total:
            parts.append(f"about {tqdm.format_interval((self.total - self.done) / rate)} left")
        _write_line(", ".join(parts))


class _Silent:
    """The count of a step whose engine (Ray Data) shows its own bar in the terminal."""

    def update(self, n: int = 1) -> None:
        pass


@contextlib.contextmanager
def counting(description: str, total: int | None = None, unit: str = "it", *,
             engine_shows: bool = False) -> Iterator[tqdm | _Lines | _Silent]:
    """A counter for a step's work (``.update(n)`` as ``n`` more are done) that shows how many of ``total`` are
    done, the rate and the time left: nothing when ``engine_shows`` and stdout is a terminal (Ray Data, the step's
    engine, shows its own bars there), a ``tqdm`` bar where stderr is a terminal, and otherwise one whole line every
    :data:`LINE_EVERY_S` and one at the end."""
    global _open_bars
    _open_bars += 1
    try:
        if engine_shows and sys.stdout.isatty():
            yield _Silent()
        elif not sys.stderr.isatty():
            lines = _Lines(description, total, unit)
            try:
                yield lines
            finally:
                lines.close()
        else:
            with logging_redirect_tqdm(), tqdm(desc=description, total=total, unit=unit, file=sys.stderr,
                                               dynamic_ncols=True, mininterval=0.2) as bar:
                yield bar
    finally:
        _open_bars -= 1


def progress(iterable: Iterable, description: str, total: int | None = None, unit: str = "it") -> Iterator:
    """``iterable``, each item counted by :func:`counting` (``total`` defaults to its length, when it has one)."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    with counting(description, total, unit) as bar:
        for item in iterable:
            yield item
            bar.update(1)


@contextlib.contextmanager
def elapsed(description: str) -> Iterator[None]:
    """Show ``description: running for <elapsed>`` once the enclosed step has run :data:`ELAPSED_AFTER_S`, then every
    :data:`LINE_EVERY_S`, one whole line each time, unless the step counts its work (:func:`counting`). Only where
    stderr is not a terminal: in a terminal Ray Data's own bars show the step's progress."""
    if sys.stderr.isatty():
        yield
        return
    done = threading.Event()
    started = time.monotonic()

    def show() -> None:
        wait = ELAPSED_AFTER_S
        while not done.wait(wait):
            wait = LINE_EVERY_S
            if not _open_bars:
                _write_line(f"{description}: running for {tqdm.format_interval(time.monotonic() - started)}")

    thread = threading.Thread(target=show, name=f"elapsed {description}", daemon=True)
    thread.start()
    try:
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

    def with_total(self, earlier_attempts: float = 0.0) -> dict[str, float]:
        """Each step's seconds and the ``total``. ``earlier_attempts``: seconds that processes before this one spent
        on the same work (a resumed run's earlier attempts), added to the total and shown as a step of its own."""
        earlier = {"earlier_attempts": earlier_attempts} if earlier_attempts else {}
        return {**self.seconds, **earlier, "total": time.perf_counter() - self._started + earlier_attempts}
