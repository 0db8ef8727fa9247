"""Apertium (rule-based MT) driven as one long-lived process per translator, fed whole batches.

Why not the ``apertium`` command itself: its text deformatter swallows the NUL bytes of null-flush mode and a ``gawk``
stage in its wrapper reads ahead, so a long-lived ``apertium -z`` never answers before end of input. Instead this
module runs the language pair's own pipeline (``apertium-wblank-mode -z <mode file>``: the same programs ``apertium``
runs, each in null-flush mode) and does the plain-text deformatting in Python, the way ``apertium-destxt`` /
``apertium-retxt`` would for a one-line input. No shell is involved: the mode's pipeline is parsed into one argument
list per program, and the programs are started and piped together here.

Framing: every sentence is one NUL-terminated record, so each pipeline stage flushes it as a unit and the *i*-th
record out is the translation of the *i*-th record in. A known sentinel record closes every batch; a batch counts
as delivered only when the sentinel comes back last, which catches the stray empty records that stages emit when a
neighbour in the pipe dies.

Failures: a batch that times out (no output for ``timeout_s``) or hits a dead process restarts the process and is
retried once; if it fails again it is split in halves until the sentences that break the engine are isolated and
reported as failed, with a reason, while the rest of the batch is translated.

Cost: the engine's programs are the cost (bench/bench_backtranslate.py). ``apertium-wblank-mode`` adds two programs,
``apertium-wblank-attach`` and ``-detach``, that carry word-bound blanks (``[[...]]`` format marks) across the
pipeline; plain text never has them (``deformat`` escapes ``[``), and the ``apertium`` command's own mode file does not
run them, so they are left out: two fewer processes per translator and ~6% less CPU per sentence, with the same
output (checked on all 118,964 Tatoeba pairs, spa-eng on the Spanish side and eng-spa on the English one).
"""

from __future__ import annotations

import logging
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parabit.translate.base import TranslationBatch, Translator, TranslatorError

log = logging.getLogger(__name__)

DEFAULT_DATADIR = Path("/usr/share/apertium")
DEBIAN_PACKAGES = "apertium apertium-eng-spa"
INSTALL_HINT = f"install the Debian packages with `sudo apt-get install {DEBIAN_PACKAGES}`"

# ISO 639-1 codes (used across parabit) to the ISO 639-3 codes of Apertium mode names.
ISO3 = {"en": "eng", "es": "spa", "fr": "fra", "ca": "cat", "pt": "por", "it": "ita", "de": "deu"}

# With -u Apertium copies unknown words through unchanged, so this record must come back verbatim.
SENTINEL = "zzparabitsentinelzz"

# How long a dying pipeline may take to exit, so its exit code can be reported (slow on a loaded machine).
EXIT_WAIT_S = 5.0

# The programs of a ``-z`` mode that only move word-bound blanks (``[[...]]``), which plain text has none of.
WORD_BOUND_BLANKS = {"apertium-wblank-attach", "apertium-wblank-detach"}

# Characters that are markup in Apertium's stream format, as apertium-destxt escapes them.
_RESERVED = re.compile(r"([\[\]<>$^/\\@{}])")
# In the output: an escaped character, the sentence-end mark the deformatter adds (".[]"), or a superblank.
_STREAM_MARKUP = re.compile(r"\\(.)|\.\[\]|\[((?:[^\]\\]|\\.)*)\]", re.S)


def normalise(sentence: str) -> str:
    """Collapse all whitespace (newlines included) to single spaces, and NUL bytes (the record terminator) into
    spaces too: one sentence must stay one record."""
    return " ".join(sentence.replace("\0", " ").split())


def deformat(sentence: str) -> str:
    """Plain text to Apertium stream format, as ``apertium-destxt`` does for a one-line input.

    Reserved characters are backslash-escaped, ``~`` (a multiword marker for the analysers) is hidden in a
    superblank, and the ``.[]`` sentence end that the deformatter always appends is added (``reformat`` drops it).
    """
    return _RESERVED.sub(r"\\\1", normalise(sentence)).replace("~", "[~]") + ".[]"


def reformat(stream: str) -> str:
    """Apertium stream format back to plain text, as ``apertium-retxt`` does."""
    body = stream[:-3]
    if stream.endswith(".[]") and "[" not in body and "\\" not in body:  # the usual case: only the end mark
        return body.strip()
    return _STREAM_MARKUP.sub(lambda m: m.group(1) if m.group(1) is not None else (m.group(2) or ""), stream).strip()


class EngineFailure(RuntimeError):
    """The Apertium process died or stopped answering during a batch; the message is the reason."""


Stages = Sequence[Sequence[str]]


def check_stages(stages: Any) -> list[list[str]]:
    """``stages`` as a list of argument lists (one per program of a pipeline); a clear error for anything else,
    notably a shell command line, which is never run."""
    if (isinstance(stages, (str, bytes)) or not isinstance(stages, Sequence) or not stages
            or not all(isinstance(argv, Sequence) and not isinstance(argv, (str, bytes)) and argv
                       and all(isinstance(arg, str) for arg in argv) for argv in stages)):
        raise TranslatorError(f"an Apertium pipeline must be a non-empty list of commands, each a list of arguments "
                              f"such as [['lt-proc', '-z', 'x.bin'], ['apertium-tagger', ...]] (no shell is used); "
                              f"got {stages!r:.200}")
    return [list(argv) for argv in stages]


class ApertiumProcess:
    """One running Apertium pipeline in null-flush mode: NUL-terminated records in, as many records out.

    ``stages`` are the pipeline's programs as argument lists, started without a shell and connected by pipes; each
    runs in its own session (no terminal signals), and all are killed together when the pipeline hangs.
    """

    def __init__(self, stages: Stages):
        self.stages = check_stages(stages)
        self._procs: list[subprocess.Popen] = []

    def exchange(self, records: Sequence[bytes], timeout_s: float) -> list[bytes]:
        """Send ``records`` (without terminators), return the same number of output records.

        Raises :class:`EngineFailure` when the process exits, or sends nothing for ``timeout_s`` seconds.
        """
        procs = self._ensure_started()
        payload = b"".join(record + b"\0" for record in records)
        # Write from a thread: a big batch overflows the pipe buffers unless output is read at the same time.
        writer = threading.Thread(target=self._write, args=(procs[0], payload), daemon=True)
        writer.start()
        output = self._read_records(procs[-1], len(records), timeout_s)
        writer.join(timeout=1.0)
        return output

    @staticmethod
    def _write(proc: subprocess.Popen, payload: bytes) -> None:
        try:
            proc.stdin.write(payload)
            proc.stdin.flush()
        except (ValueError, OSError):  # a dead pipeline: the reader sees it too, and reports why
            pass

    def _read_records(self, proc: subprocess.Popen, count: int, timeout_s: float) -> list[bytes]:
        # ``timeout_s`` bounds the wait for the next output, not the whole batch: a large batch on a slow machine is
        # not a hang, a pipeline that stops answering is.
        buffer = bytearray()
        fd = proc.stdout.fileno()
        received = 0
        while received < count:
            ready, _, _ = select.select([fd], [], [], timeout_s)
            if not ready:
                raise EngineFailure(f"apertium hung (no answer within {timeout_s:g}s)")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise EngineFailure(self._crash_reason() or "apertium crashed (its output closed)")
            buffer += chunk
            received += chunk.count(b"\0")  # counted per chunk: linear in the batch, not quadratic
        records = bytes(buffer).split(b"\0")
        if len(records) != count + 1 or records[-1]:
            # Stages flush empty records when a neighbour dies: name the crash if there was one.
            raise EngineFailure(self._crash_reason() or "apertium returned more records than it was sent")
        return records[:-1]

    def _crash_reason(self, wait_s: float = EXIT_WAIT_S) -> str | None:
        """"apertium crashed (exit code N)" for the stage that failed, or None if none has (yet) within ``wait_s``.

        A stage killed by a broken pipe only follows a neighbour's death, so another failing stage is named first."""
        deadline = time.monotonic() + wait_s
        codes = []
        for proc in self._procs:
            try:
                codes.append(proc.wait(timeout=max(deadline - time.monotonic(), 0.01)))
            except subprocess.TimeoutExpired:
                codes.append(None)
        failed = [c for c in codes if c not in (None, 0, -signal.SIGPIPE)] or [c for c in codes if c not in (None, 0)]
        return f"apertium crashed (exit code {failed[0]})" if failed else None

    def failure_reason(self, wait_s: float = EXIT_WAIT_S) -> str:
        """Why a batch came back misaligned: a crashed stage (its exit code), or else a garbled stream."""
        return (self._crash_reason(wait_s)
                or "apertium output lost alignment (the batch's end marker did not come back last)")

    def _ensure_started(self) -> list[subprocess.Popen]:
        if not self._procs or any(proc.poll() is not None for proc in self._procs):
            self.stop()
            try:
                for argv in self.stages:
                    upstream = self._procs[-1].stdout if self._procs else subprocess.PIPE
                    self._procs.append(subprocess.Popen(argv, stdin=upstream, stdout=subprocess.PIPE,
                                                        stderr=subprocess.DEVNULL, start_new_session=True))
                    if upstream is not subprocess.PIPE:
                        upstream.close()  # the next stage holds it now; closed here, a dead stage gives EOF/EPIPE
            except OSError as err:
                self.stop()
                raise TranslatorError(f"cannot start the Apertium pipeline stage {argv[0]!r}: {err}") from None
        return self._procs

    def stop(self) -> None:
        """Kill the whole pipeline (every stage), if running."""
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
        for proc in self._procs:
            proc.wait()
            for stream in (proc.stdin, proc.stdout):
                try:
                    if stream is not None:
                        stream.close()
                except OSError:  # stdin of a killed pipeline may still hold unflushed bytes
                    pass
        self._procs = []


def apertium_pipeline(mode: str, datadir: Path = DEFAULT_DATADIR) -> list[list[str]]:
    """The programs of ``mode``'s pipeline as argument lists, every stage in null-flush mode and unknown words
    unmarked (``-u``), without the word-bound-blank programs (:data:`WORD_BOUND_BLANKS`).

    Raises :class:`TranslatorError` naming the Debian packages when Apertium or the mode is not installed.
    """
    if shutil.which("apertium-wblank-mode") is None or shutil.which("lt-proc") is None:
        raise TranslatorError(f"Apertium is not installed (no apertium-wblank-mode / lt-proc on PATH); {INSTALL_HINT}")
    mode_file = Path(datadir) / "modes" / f"{mode}.mode"
    if not mode_file.is_file():
        available = sorted(p.stem for p in (Path(datadir) / "modes").glob("*.mode"))
        raise TranslatorError(
            f"Apertium mode {mode!r} is not installed ({mode_file} is missing; installed modes: {available}); "
            f"{INSTALL_HINT}"
        )
    pipeline = subprocess.run(
        ["apertium-wblank-mode", "-z", str(mode_file)], capture_output=True, text=True, check=True
    ).stdout.strip()
    # Word-bound blanks never occur in deformatted plain text (see the module docstring): skip their two programs.
    return [argv for argv in parse_mode_pipeline(pipeline, mode_file) if Path(argv[0]).name not in WORD_BOUND_BLANKS]


# The mode file's $1 is lt-proc's generation flag (-n: leave unknown words unmarked, as `apertium -u`) and $2 the
# tagger's (none: the word goes away, as an empty unquoted shell variable does), as the `apertium` wrapper passes them.
_MODE_ARGUMENTS = {"$1": ["-n"], "$2": []}
_SHELL_SYNTAX = re.compile(r"[$;&<>`(){}*?]")


def parse_mode_pipeline(pipeline: str, source: str | Path = "mode") -> list[list[str]]:
    """A mode's ``prog args | prog args ...`` line as argument lists; anything beyond plain words, quotes and pipes
    (redirections, variables other than $1/$2, command substitution) is refused rather than given to a shell."""
    lexer = shlex.shlex(pipeline, posix=True, punctuation_chars="|")
    lexer.whitespace_split = True
    stages: list[list[str]] = [[]]
    for token in lexer:
        if token == "|":
            stages.append([])
        elif token in _MODE_ARGUMENTS:
            stages[-1].extend(_MODE_ARGUMENTS[token])
        elif _SHELL_SYNTAX.search(token):
            raise TranslatorError(f"{source}: unsupported shell syntax {token!r} in the Apertium pipeline {pipeline!r}")
        else:
            stages[-1].append(token)
    return check_stages(stages)


def mode_languages(mode: str) -> tuple[str, str]:
    """``"spa-eng_US"`` → ``("spa", "eng")``."""
    src, _, tgt = mode.split("_", 1)[0].partition("-")
    return src, tgt


def _check_direction(mode: str, src: str, tgt: str) -> None:
    wanted = (ISO3.get(src, src), ISO3.get(tgt, tgt))
    if wanted != mode_languages(mode):
        raise TranslatorError(f"Apertium mode {mode!r} cannot translate {src}->{tgt}; "
                              f"use mode '{wanted[0]}-{wanted[1]}' (or a variant such as '{wanted[0]}-{wanted[1]}_US')")


class ApertiumTranslator(Translator):
    """Translates with one long-lived Apertium pipeline for one direction (``mode``, e.g. "spa-eng").

    ``timeout_s`` bounds the wait for the engine's next output (a batch may take longer as a whole); a hung or
    crashed process is restarted. Sentences are whitespace-normalised first (a newline would split a record).
    ``pipeline`` replaces the programs that read the null-flushed Apertium stream (default: the installed ``mode``'s),
    as a list of argument lists, e.g. to run a patched language pair; it is never given to a shell.

    Raises :class:`TranslatorError` at construction when Apertium or the mode is missing.
    """

    engine = "apertium"
    provides_cost = False

    def __init__(
        self,
        mode: str = "spa-eng",
        *,
        timeout_s: float = 60.0,
        datadir: str | Path = DEFAULT_DATADIR,
        pipeline: Stages | None = None,
    ):
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        self.mode = mode
        self.timeout_s = timeout_s
        self._process = ApertiumProcess(apertium_pipeline(mode, Path(datadir)) if pipeline is None else pipeline)
        self.restarts = 0

    @classmethod
    def options_for(cls, src: str, tgt: str, options: Mapping[str, Any]) -> dict[str, Any]:
        """Without a ``mode``, the mode of the direction (``en``→``es``: ``eng-spa``): a round trip through
        Apertium runs one process per leg."""
        if "mode" in options:
            return dict(options)
        return {**options, "mode": f"{ISO3.get(src, src)}-{ISO3.get(tgt, tgt)}"}

    @classmethod
    def check_options(cls, src: str, tgt: str, options: Mapping[str, Any]) -> None:
        """The mode (given, or the direction's) must be installed and translate ``src``→``tgt``."""
        options = cls.options_for(src, tgt, options)
        mode = options["mode"]
        _check_direction(mode, src, tgt)
        if options.get("pipeline") is None:
            apertium_pipeline(mode, Path(options.get("datadir", DEFAULT_DATADIR)))
        else:
            check_stages(options["pipeline"])

    def translate(self, sentences: Sequence[str], src: str, tgt: str) -> TranslationBatch:
        _check_direction(self.mode, src, tgt)
        records = [deformat(sentence).encode("utf-8") for sentence in sentences]
        results = self._translate_records(records, attempts=2)
        translations = [reformat(out.decode("utf-8", errors="replace")) if isinstance(out, bytes) else None
                        for out in results]
        errors = [None if isinstance(out, bytes) else out.reason for out in results]
        return TranslationBatch(translations, errors)

    def close(self) -> None:
        self._process.stop()

    def _translate_records(self, records: list[bytes], attempts: int) -> list[bytes | "_Failed"]:
        """Translate records, isolating the ones that break the engine (see the module docstring)."""
        if not records:
            return []
        failure = None
        for _ in range(attempts):
            try:
                return self._exchange(records)
            except EngineFailure as err:
                failure = err
                self.restarts += 1
                log.warning("%s on a batch of %d sentence(s); restarting apertium", err, len(records))
                self._process.stop()
        if len(records) == 1:
            return [_Failed(str(failure))]
        middle = len(records) // 2
        return [*self._translate_half(records[:middle]), *self._translate_half(records[middle:])]

    def _translate_half(self, records: list[bytes]) -> list[bytes | "_Failed"]:
        # The whole batch was already retried, so a half gets one attempt; a single sentence gets two again
        # before it is declared failed ("crashes it repeatedly").
        return self._translate_records(records, attempts=2 if len(records) == 1 else 1)

    def _exchange(self, records: list[bytes]) -> list[bytes]:
        sentinel = deformat(SENTINEL).encode("utf-8")
        output = self._process.exchange([*records, sentinel], self.timeout_s)
        if reformat(output[-1].decode("utf-8", errors="replace")).rstrip(".") != SENTINEL:
            # Stages flush an empty record when a neighbour dies, so a crash usually shows up here first.
            raise EngineFailure(self._process.failure_reason())
        return output[:-1]


@dataclass(frozen=True)
class _Failed:
    """Marks a sentence the engine could not translate, with the reason."""

    reason: str
