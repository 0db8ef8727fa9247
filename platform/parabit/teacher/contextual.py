"""Contextual word vectors from the teacher (Wada et al. 2025): a word's vector as the mean of the teacher's token
states at that word over sentences that contain it, rather than the word encoded alone. They come out of the same
forward pass that gives the sentences' teacher vectors (the distillation loss's targets), so they cost no second
pass: :func:`encode_in_context` returns both.

A word is a token of parabit's tokenizer; the teacher's word pieces inside it (matched by character offsets on the
lower-cased text, which is what the uncased teacher reads anyway) are averaged into one state, normalised to unit
length like the teacher's sentence vectors, and summed over the sentences. :class:`ContextualSums` keeps the sums and
counts (they add across batches and runs); :meth:`ContextualSums.blend` mixes the means into the words' alone vectors.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from parabit.teacher.model import TEACHER_BATCH, TEACHER_DIM, load_teacher
from parabit.text.tokenize import TREEBANK_LIKE_PATTERN



@dataclass
class ContextualSums:
    """Per word (parabit token): the sum of its unit contextual vectors over the sentences it occurs in, and how many
    occurrences were summed."""

    words: list[str]
    sums: np.ndarray  # [len(words), TEACHER_DIM] float64
    counts: np.ndarray  # [len(words)] int64

    @classmethod
    def empty(cls) -> "ContextualSums":
        return cls([], np.zeros((0, TEACHER_DIM)), np.zeros(0, dtype=np.int64))

    def add(self, words: list[str], sums: np.ndarray, counts: np.ndarray) -> None:
        index = {word: i for i, word in enumerate(self.words)}
        new = [word for word in dict.fromkeys(words) if word not in index]
        if new:
            index.update({word: len(self.words) + i for i, word in enumerate(new)})
            self.words += new
            self.sums = np.concatenate([self.sums, np.zeros((len(new), TEACHER_DIM))])
            self.counts = np.concatenate([self.counts, np.zeros(len(new), dtype=np.int64)])
        rows = np.fromiter((index[word] for word in words), dtype=np.int64, count=len(words))
        np.add.at(self.sums, rows, sums)
        np.add.at(self.counts, rows, counts)

    def blend(self, words: list[str], alone: np.ndarray, weight: float, min_count: int) -> tuple[np.ndarray, int]:
        """``alone`` (the words' vectors encoded alone, unit length) with each word seen at least ``min_count`` times
        moved to ``(1 − weight)·alone + weight·mean contextual vector``; returns the vectors and how many moved."""
        index = {word: i for i, word in enumerate(self.words)}
        blended = alone.astype(np.float64).copy()
        moved = 0
        for row, word in enumerate(words):
            found = index.get(word)
            if found is not None and self.counts[found] >= min_count:
                mean = self.sums[found] / self.counts[found]
                blended[row] = (1 - weight) * blended[row] + weight * mean / np.linalg.norm(mean)
                moved += 1
        return blended, moved

    def digest(self) -> str:
        """What a table built from these sums is keyed by."""
        digest = hashlib.sha256("\n".join(self.words).encode())
        digest.update(np.ascontiguousarray(self.counts).tobytes())
        digest.update(np.ascontiguousarray(self.sums, dtype=np.float32).tobytes())
        return digest.hexdigest()[:16]


def word_states(text: str, offsets: list[tuple[int, int]], states: np.ndarray,
                pattern: re.Pattern = re.compile(TREEBANK_LIKE_PATTERN)) -> tuple[list[str], np.ndarray]:
    """The words of a lower-cased ``text`` (parabit's tokens) that the teacher saw, each with the unit mean of the
    states of its word pieces (``offsets``: each piece's character span; special tokens have empty spans)."""
    spans = [(match.start(), match.end(), match.group()) for match in pattern.finditer(text)]
    if not spans:
        return [], np.zeros((0, states.shape[1]))
    starts = np.asarray([start for start, _, _ in spans])
    ends = np.asarray([end for _, end, _ in spans])
    pieces = np.asarray(offsets)
    real = pieces[:, 1] > pieces[:, 0]
    token = np.searchsorted(starts, pieces[:, 0], side="right") - 1
    inside = real & (token >= 0) & (pieces[:, 0] < ends[np.clip(token, 0, None)])
    seen = np.unique(token[inside])
    vectors = np.stack([states[inside & (token == t)].mean(axis=0) for t in seen]) if len(seen) else \
        np.zeros((0, states.shape[1]))
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return [spans[t][2] for t in seen], vectors


class TeacherInContext:
    """A Ray Data batch-inference class: each actor loads the teacher once; a batch of ``index``/``text`` rows comes
    back as one row per sentence (``index``, ``embedding``: its teacher vector) and one row per distinct word of the
    batch (``word``, ``vector_sum``, ``count``: its contextual vectors summed), told apart by ``kind``."""

    def __init__(self):
        self.model = load_teacher()

    def __call__(self, batch: dict[str, np.ndarray]) -> pa.Table:
        texts = [str(text).lower() for text in batch["text"]]
        outputs = self.model.encode(texts, output_value=None, batch_size=TEACHER_BATCH, show_progress_bar=False)
        pieces = self.model.tokenizer(texts, return_offsets_mapping=True, truncation=True,
                                      max_length=self.model.max_seq_length)["offset_mapping"]
        sums = ContextualSums.empty()
        for text, output, offsets in zip(texts, outputs, pieces):
            states = output["token_embeddings"][output["attention_mask"].bool()].float().cpu().numpy()
            words, vectors = word_states(text, offsets, states[:len(offsets)])
            if words:
                sums.add(words, vectors, np.ones(len(words), dtype=np.int64))
        embeddings = np.stack([output["sentence_embedding"].float().cpu().numpy() for output in outputs])
        return _rows(np.asarray(batch["index"]), embeddings, sums)


def _vectors(array: np.ndarray) -> pa.FixedSizeListArray:
    return pa.FixedSizeListArray.from_arrays(pa.array(array.astype(np.float32).ravel()), TEACHER_DIM)


def _rows(index: np.ndarray, embeddings: np.ndarray, sums: ContextualSums) -> pa.Table:
    sentences, words = len(index), len(sums.words)
    return pa.table({
        "kind": ["sentence"] * sentences + ["word"] * words,
        "index": pa.array(list(index) + [None] * words, pa.int64()),
        "embedding": pa.concat_arrays([_vectors(embeddings), pa.nulls(words, pa.list_(pa.float32(), TEACHER_DIM))]),
        "word": pa.array([None] * sentences + sums.words, pa.string()),
        "vector_sum": pa.concat_arrays([pa.nulls(sentences, pa.list_(pa.float32(), TEACHER_DIM)), _vectors(sums.sums)]),
        "count": pa.array([None] * sentences + sums.counts.tolist(), pa.int64()),
    })


def encode_in_context(texts: list[str], actors: int = 2) -> tuple[np.ndarray, ContextualSums]:
    """The teacher's vectors of ``texts`` (as :func:`parabit.teacher.inference.encode_with_ray` gives them) and the
    contextual vectors of their words, from one pass of a Ray Data actor pool."""
    from parabit.output import counting
    from parabit.teacher.inference import teacher_dataset

    vectors = np.zeros((len(texts), TEACHER_DIM), dtype=np.float32)
    sums = ContextualSums.empty()
    if not texts:
        return vectors, sums
    encoded = teacher_dataset(texts, TeacherInContext, actors)
    with counting("teacher: sentences and their words in context", total=len(texts), unit="sentences",
                  engine_shows=True) as done:
        for table in encoded.iter_batches(batch_size=None, batch_format="pyarrow"):
            kinds = np.asarray(table["kind"].to_pylist())
            sentences, words = table.filter(pa.array(kinds == "sentence")), table.filter(pa.array(kinds == "word"))
            index = sentences["index"].to_numpy()
            vectors[index] = sentences["embedding"].combine_chunks().flatten().to_numpy().reshape(-1, TEACHER_DIM)
            if len(words):
                sums.add(words["word"].to_pylist(), words["vector_sum"].combine_chunks().flatten().to_numpy().reshape(
                    -1, TEACHER_DIM).astype(np.float64), words["count"].to_numpy())
            done.update(len(index))
    return vectors, sums
