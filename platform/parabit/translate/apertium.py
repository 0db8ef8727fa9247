"""Apertium (rule-based MT) driven as one long-lived process per translator, fed whole batches.

Why not the ``apertium`` command itself: its text deformatter swallows the NUL bytes of null-flush mode and a ``gawk``
stage in its wrapper reads ahead, so a long-lived ``apertium -z`` never answers before end of input. Instead this
module runs the language pair's own pipeline (``apertium-wblank-mode -z <mode file>``: the same programs ``apertium``
runs, each in null-flush mode) and does the plain-text deformatting in Python, the way ``apertium-destxt`` /
``apertium-retxt`` would for a one-line input.

Framing: every sentence is one NUL-terminated record, so each pipeline stage flushes it as a unit and the *i*-th
record out is the translation of the *i*-th record in. A known sentinel record closes every batch; a batch counts
as delivered only when the sentinel comes back last, which catches the stray empty records that stages emit when a
neighbour in the pipe dies.

Failures: a batch that times out or hits a dead process restarts the process and is retried once; if it fails again
it is split in halves until the sentences that break the engine are isolated and reported as failed, with a reason,
while the rest of the batch is translated.
"""

from __future__ import annotations

import logging
import os
import re
import select
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

# Characters that are markup in Apertium's stream format, as apertium-destxt escapes them.
_RESERVED = re.compile(r"([\[\]<>$^/\\@{}])")
# In the output: an escaped character, the sentence-end mark the deformatter adds (".[]"), or a superblank.
_STREAM_MARKUP = re.compile(r"\\(.)|\.\[\]|\[((?:[^\]\\]|\\.)*)\]", re.S)


def normalise(sentence: str) -> str:
    """Collapse all whitespace (newlines included) to single spaces: one sentence must stay one record."""
    return " ".join(sentence.split())


def deformat(sentence: str) -> str:
    """Plain text to Apertium stream format, as ``apertium-destxt`` does for a one-line input.

    Reserved characters are backslash-escaped, ``~`` (a multiword marker for the analysers) is hidden in a
    superblank, and the ``.[]`` sentence end that the deformatter always appends is added (``reformat`` drops it).
    """
    return _RESERVED.sub(r"\\\1", normalise(sentence)).replace("~", "[~]") + ".[]"


def reformat(stream: str) -> str:
    """Apertium stream format back to plain text, as ``apertium-retxt`` does."""
    return _STREAM_MARKUP.sub(lambda m: m.group(1) if m.group(1) is not None else (m.group(2) or ""), stream).strip()


class EngineFailure(RuntimeError):
    """The Apertium process died or stopped answering during a batch; the message is the reason."""


class ApertiumProcess:
    """One running Apertium pipeline in null-flush mode: NUL-terminated records in, as many records out.

    ``command`` is a shell pipeline reading Apertium stream format on stdin. The process runs in its own process
    group so that a hung pipeline can be killed as a whole.
    """

    def __init__(self, command: str):
        self.command = command
        self._proc: subprocess.Popen | None = None

    def exchange(self, records: Sequence[bytes], timeout_s: float) -> list[bytes]:
        """Send ``records`` (without terminators), return the same number of output records.

        Raises :class:`EngineFailure` when the process exits, or has not answered within ``timeout_s``.
        """
        proc = self._ensure_started()
        payload = b"".join(record + b"\0" for record in records)
        # Write from a thread: a big batch overflows the pipe buffers unless output is read at the same time.
        writer = threading.Thread(target=self._write, args=(proc, payload), daemon=True)
        writer.start()
        output = self._read_records(proc, len(records), timeout_s)
        writer.join(timeout=1.0)
        return output

    @staticmethod
    def _write(proc: subprocess.Popen, payload: bytes) -> None:
        try:
            proc.stdin.write(payload)
            proc.stdin.flush()
        except (ValueError, OSError):  # a dead pipeline: the reader sees it too, and reports why
            pass

    @staticmethod
    def _read_records(proc: subprocess.Popen, count: int, timeout_s: float) -> list[bytes]:
        deadline = time.monotonic() + timeout_s
        buffer = bytearray()
        fd = proc.stdout.fileno()
        while buffer.count(b"\0") < count:
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(remaining, 0.0))
            if not ready:
                raise EngineFailure(f"apertium hung (no answer within {timeout_s:g}s)")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                code = proc.wait(timeout=EXIT_WAIT_S)
                raise EngineFailure(f"apertium crashed (exit code {code})")
            buffer += chunk
        records = bytes(buffer).split(b"\0")
        if len(records) != count + 1 or records[-1]:
            raise EngineFailure("apertium returned more records than it was sent")
        return records[:-1]

    def failure_reason(self, wait_s: float = EXIT_WAIT_S) -> str:
        """Why a batch came back misaligned: a crashed stage (its exit code), or else a garbled stream."""
        if self._proc is not None:
            try:
                return f"apertium crashed (exit code {self._proc.wait(timeout=wait_s)})"
            except subprocess.TimeoutExpired:
                pass
        return "apertium output lost alignment (the batch's end marker did not come back last)"

    def _ensure_started(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            self.stop()
            self._proc = subprocess.Popen(
                ["bash", "-c", self.command],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        return self._proc

    def stop(self) -> None:
        """Kill the whole pipeline (every stage), if running."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stdout):
            try:
                stream.close()
            except OSError:  # stdin of a killed pipeline may still hold unflushed bytes
                pass
        self._proc = None


def apertium_pipeline(mode: str, datadir: Path = DEFAULT_DATADIR) -> str:
    """The shell pipeline of ``mode`` with every stage in null-flush mode and unknown words unmarked (``-u``).

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
    # pipefail: a crashing stage gives the pipeline its exit code. The mode file's $1 is lt-proc's generation flag (-n: leave unknown words unmarked, as `apertium -u`) and $2
    # the tagger's (none), exactly as the `apertium` wrapper passes them.
    return f"set -o pipefail; set -- -n ''; {pipeline}"


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

    ``timeout_s`` bounds one batch; a hung or crashed process is restarted. Sentences are whitespace-normalised
    first (a newline would split a record). ``pipeline`` replaces the shell command that reads the null-flushed
    Apertium stream (default: the installed ``mode``), e.g. to run a patched language pair.

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
        pipeline: str | None = None,
    ):
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        self.mode = mode
        self.timeout_s = timeout_s
        self._process = ApertiumProcess(pipeline or apertium_pipeline(mode, Path(datadir)))
        self.restarts = 0

    @classmethod
    def check_options(cls, src: str, tgt: str, options: Mapping[str, Any]) -> None:
        """The mode must be installed and translate ``src``→``tgt``."""
        mode = options.get("mode", "spa-eng")
        _check_direction(mode, src, tgt)
        if options.get("pipeline") is None:
            apertium_pipeline(mode, Path(options.get("datadir", DEFAULT_DATADIR)))

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
