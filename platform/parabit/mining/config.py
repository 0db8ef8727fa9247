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
    lang: str
    unescape: bool = True
    limit: PositiveInt | None = None

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
    output_dir: str | None = None
    experiment: str = "parabit-pipelines"
    model: str = DEFAULT_MODEL
    source: MineSide
    target: MineSide
    k: PositiveInt = 4
    threshold: PositiveFloat | None = None
    actors: PositiveInt = 2
    cpus_per_actor: PositiveFloat = 0.5
    batch_size: PositiveInt = 5000
    query_block: PositiveInt = 4096

    @property
    def output_path(self) -> Path:
        return Path(self.output_dir).expanduser() if self.output_dir else output_root() / "pipelines" / self.name

    def embed_settings(self, model: str) -> Any:
        """What the embeddings depend on: the piles and the model (``model``: its pinned version)."""
        return {"source": self.source, "target": self.target, "model": model}

    def pair_settings(self) -> Any:
        """What the pairs depend on besides the embeddings."""
        return {"k": self.k, "threshold": self.threshold}
