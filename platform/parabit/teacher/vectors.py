"""Static word vectors distilled from the teacher (Model2Vec's recipe): every word encoded alone by the teacher, the
vectors reduced with PCA; the frequency weighting is the averaging encoder's own (SIF weights).

The teacher's vector of a word never changes, so it is computed once per word and kept in a :class:`WordVectorCache`
shared by every run: a run whose vocabulary adds words encodes only those, as a Ray Data batch-inference job
(:func:`parabit.teacher.inference.encode_with_ray`: an actor pool, the teacher loaded once per actor). The reduced
table of a vocabulary is cached too, under the digest of its words, the dimension and the teacher: the file the driver
builds and every worker reads."""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from parabit.paths import output_root
from parabit.runlock import one_builder
from parabit.teacher.inference import encode_with_ray
from parabit.teacher.model import TEACHER_DIM, require_teacher, teacher_id

if TYPE_CHECKING:
    from parabit.teacher.contextual import ContextualSums

log = logging.getLogger(__name__)

# The root-mean-square coordinate of a distilled table: GloVe 6B 50d's (0.69), the scale the pair recipes' learning
# rates, regularisation and init_std were chosen at. (Untrained, scale changes nothing: similarities are cosines.)
TABLE_RMS = 0.69


@dataclass
class CacheLookup:
    """The teacher vectors of the words asked for, and how many of those words had to be encoded now."""

    vectors: np.ndarray
    encoded: int


class WordVectorCache:
    """The teacher's vector of every word encoded so far: ``<root>/<teacher id>/words/part-*.parquet`` (columns
    ``word`` and ``vector``). Parts are only added, never rewritten, so a run reading the cache while another adds to
    it sees a consistent set."""

    def __init__(self, root: Path | None = None):
        require_teacher("distilled word vectors")
        self.root = (root or output_root() / "teacher") / teacher_id()
        self.folder = self.root / "words"

    def lookup(self, words: list[str], actors: int = 2) -> CacheLookup:
        """The teacher vectors of ``words`` (in order), encoding the words the cache lacks first."""
        with one_builder(self.root / "words.lock"):
            known = self._read()
            missing = [word for word in dict.fromkeys(words) if word not in known]
            if missing:
                started = time.perf_counter()
                log.info("encoding %s words with the teacher on up to %d actor(s) (%s cached)", f"{len(missing):,}",
                         actors, f"{len(known):,}")
                vectors = encode_with_ray(missing, actors, description="teacher: word vectors", unit="words")
                self._append(missing, vectors)
                log.info("%s words encoded in %.0f s", f"{len(missing):,}", time.perf_counter() - started)
                known.update(zip(missing, vectors))
        return CacheLookup(np.stack([known[word] for word in words]) if words
                           else np.zeros((0, TEACHER_DIM), np.float32), len(missing))

    def _read(self) -> dict[str, np.ndarray]:
        known: dict[str, np.ndarray] = {}
        for part in sorted(self.folder.glob("part-*.parquet")):
            table = pq.read_table(part)
            vectors = table["vector"].combine_chunks().flatten().to_numpy().reshape(-1, TEACHER_DIM)
            known.update(zip(table["word"].to_pylist(), vectors))
        return known

    def _append(self, words: list[str], vectors: np.ndarray) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        number = len(list(self.folder.glob("part-*.parquet")))
        column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.astype(np.float32).ravel()), TEACHER_DIM)
        temporary = self.folder / f".part-{number:05d}.parquet.tmp"
        pq.write_table(pa.table({"word": words, "vector": column}), temporary)
        temporary.rename(self.folder / f"part-{number:05d}.parquet")


def reduce_dimensions(vectors: np.ndarray, dim: int, rms: float = TABLE_RMS) -> np.ndarray:
    """``vectors`` centred, projected on their first ``dim`` principal components and scaled so the root mean
    square of a coordinate is ``rms`` (float32)."""
    if dim > vectors.shape[1]:
        raise ValueError(f"distilled vectors have at most {vectors.shape[1]} dimensions (asked for {dim})")
    centred = vectors.astype(np.float64) - vectors.mean(axis=0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    reduced = centred @ components[:dim].T
    return (reduced * (rms / np.sqrt(np.mean(reduced ** 2)))).astype(np.float32)


@dataclass(frozen=True)
class ContextualBlend:
    """How much of a word's contextual vector its distilled vector takes: ``weight`` for a word seen in at least
    ``min_count`` sentences of ``sums`` (a :class:`~parabit.teacher.contextual.ContextualSums`); the others keep
    their vector encoded alone."""

    weight: float
    min_count: int
    sums: "ContextualSums"

    def key(self) -> str:
        return f"contextual|{self.weight}|{self.min_count}|{self.sums.digest()}"


def table_digest(words: list[str], dim: int, blend: ContextualBlend | None = None) -> str:
    """What a reduced table is keyed by: its words (in order), its dimension, the teacher, and any contextual blend."""
    digest = hashlib.sha256(f"{teacher_id()}|{dim}|".encode())
    digest.update("\n".join(words).encode())
    if blend is not None:
        digest.update(blend.key().encode())
    return digest.hexdigest()[:16]


def distilled_table_path(words: list[str], dim: int, root: Path | None = None,
                         blend: ContextualBlend | None = None) -> Path:
    return (root or output_root() / "teacher") / teacher_id() / "tables" / f"{table_digest(words, dim, blend)}.npy"


def build_distilled_table(words: list[str], dim: int, actors: int = 2, root: Path | None = None,
                          blend: ContextualBlend | None = None) -> Path:
    """The ``[len(words), dim]`` table of distilled vectors of ``words`` (built once; the cached file after that);
    with a ``blend``, the words seen in context move towards their contextual vectors before the reduction."""
    path = distilled_table_path(words, dim, root, blend)
    with one_builder(path.with_suffix(".lock")):
        if not path.is_file():
            vectors = WordVectorCache(root).lookup(words, actors).vectors
            if blend is not None:
                vectors, moved = blend.sums.blend(words, vectors, blend.weight, blend.min_count)
                log.info("%s of %s words start from their contextual vectors (weight %s)", f"{moved:,}",
                         f"{len(words):,}", blend.weight)
            temporary = path.with_suffix(".tmp.npy")
            np.save(temporary, reduce_dimensions(vectors, dim))
            temporary.rename(path)
    return path


def load_distilled_table(words: list[str], dim: int, root: Path | None = None,
                         blend: ContextualBlend | None = None) -> np.ndarray:
    """The table :func:`build_distilled_table` made for ``words``; a clear error when it was not built."""
    path = distilled_table_path(words, dim, root, blend)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no distilled table for these {len(words):,} words at dim {dim}; "
                                "the run's driver builds it before training (Recipe.prepare)")
    return np.load(path)
