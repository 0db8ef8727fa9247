"""The configuration of bitext mining (``parabit mine``): two piles of sentences, the bilingual model that embeds
them, and how pairs are chosen. Checked when loaded, with a message naming the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, PositiveFloat, PositiveInt

from parabit.config import Config
from parabit.paths import data_root, output_root

DEFAULT_MODEL = "models:/parabit-encoder-bilingual@champion"


class MineSide(Config):
    """One pile: a text file of one sentence per line (relative paths are under the data root, ``$PARABIT_DATA``),
    in language ``lang``; Moses XML escapes are undone unless ``unescape`` is off; ``limit``: its first lines only."""

    path: str
    """The pile: a text file of one sentence per line; a relative path is under the data root (``$PARABIT_DATA``)."""
    lang: str
    """The pile's language (ISO 639-1), in which the model reads every sentence of it; the model must read it."""
    unescape: bool = True
    """Undo Moses XML escapes (``&apos;``, ``&amp;``, ...) in each line; turn it off for raw text, where ``&`` is
    literal."""
    limit: PositiveInt | None = None
    """Read only the file's first this many lines (None: all); the empty or over-long ones among them are rejected."""

    @property
    def file(self) -> Path:
        candidate = Path(self.path).expanduser()
        return candidate if candidate.is_absolute() else data_root() / candidate


class MineConfig(Config):
    """Mine translation pairs from two piles of sentences (``source`` and ``target``, e.g. Spanish and English) with
    a bilingual ``model`` (a registered model such as ``models:/parabit-encoder-bilingual@champion``, a pyfunc model
    folder or an embedder folder).

    Embedding runs as Ray Data batch inference: ``actors`` actors, each loading the model once, with
    ``cpus_per_actor`` CPUs, ``batch_size`` sentences per call. Pairs are scored as LASER does (Artetxe & Schwenk
    2019): each sentence's ``k`` nearest neighbours on the other side by cosine, every candidate (each sentence's
    nearest neighbour, both ways) scored by the ratio margin, then taken greedily best first with each sentence in
    at most one pair; with ``threshold``, only pairs whose margin reaches it are kept. Neighbours are searched
    ``query_block`` sentences at a time (memory: ``query_block`` × the other side's sentences).

    Outputs go to ``output_dir`` (default ``<output root>/pipelines/<name>``): ``embed/`` and ``pairs/``, each an
    exactly-once stage, so a re-run resumes after the last complete one; one MLflow run in ``experiment``."""

    name: str = Field("mine", pattern=r"^[^/\s]+$")
    """The mining's name (no ``/`` or whitespace): its MLflow run's name and its default output folder."""
    output_dir: str | None = None
    """Where the stages write; None: ``<output root>/pipelines/<name>``, the only folder that ``pipeline:<name>``
    references find. A relative path is taken from the current directory."""
    experiment: str = "parabit-pipelines"
    """The MLflow experiment of the mining's run (one per execution; one that a killed execution left running is
    taken over)."""
    model: str = DEFAULT_MODEL
    """The bilingual model: ``models:/NAME@ALIAS``, ``models:/NAME/VERSION``, ``runs:/...``, a pyfunc model folder or
    an embedder folder. An alias is read as the version it points at when the run starts, so the piles are embedded
    again after it moves."""
    source: MineSide
    """One pile (e.g. the Spanish sentences): the ``source_line`` and ``source_text`` of the pairs."""
    target: MineSide
    """The other pile (e.g. the English sentences): the ``target_line`` and ``target_text`` of the pairs."""
    k: PositiveInt = 4
    """Nearest neighbours on the other side whose mean cosine is a sentence's neighbourhood in the ratio margin (the
    margin's denominator); a candidate pair is always a sentence with its single nearest neighbour."""
    threshold: PositiveFloat | None = None
    """The least ratio margin of a kept pair (None: keep every pair the greedy matching takes); a margin above 1
    stands out from both sentences' neighbourhoods. Pairs below it are rejects."""
    actors: PositiveInt = 2
    """Embedding actors in the Ray Data pool, each loading the model once."""
    cpus_per_actor: PositiveFloat = 0.5
    """Logical Ray CPUs reserved per embedding actor (fractions allowed)."""
    batch_size: PositiveInt = 5000
    """Sentences per embedding call, and per Ray Data block."""
    query_block: PositiveInt = 4096
    """Sentences whose neighbours are searched at a time: memory grows as this × the other pile's sentences; the
    pairs do not depend on it."""

    @property
    def output_path(self) -> Path:
        return Path(self.output_dir).expanduser() if self.output_dir else output_root() / "pipelines" / self.name

    def embed_settings(self, model: str) -> Any:
        """What the embeddings depend on: the piles and the model (``model``: its pinned version)."""
        return {"source": self.source, "target": self.target, "model": model}

    def pair_settings(self) -> Any:
        """What the pairs depend on besides the embeddings."""
        return {"k": self.k, "threshold": self.threshold}
