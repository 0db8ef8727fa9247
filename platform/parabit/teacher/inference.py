"""The teacher over many texts at once: a Ray Data batch-inference pass (an actor pool, the teacher loaded once per
actor). The static pass (:func:`encode_with_ray`: a sentence vector per text) serves the distilled word vectors
(:mod:`parabit.teacher.vectors`) and every recipe that caches the teacher's sentence vectors; the pass in context
(:mod:`parabit.teacher.contextual`) maps the same dataset with another batch class."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from parabit.teacher.model import TEACHER_DIM, TeacherEncoder

ENCODE_BATCH = 512


def encode_with_ray(texts: list[str], actors: int = 2, batch_size: int = ENCODE_BATCH,
                    description: str = "teacher: sentences", unit: str = "sentences") -> np.ndarray:
    """The teacher's vectors of ``texts`` (in their order), computed by a pool of up to ``actors`` Ray actors with
    one CPU each: no more than there are blocks of texts (each actor loads the teacher, ~5 s of CPU). Its progress
    (``description``: texts done of all, their rate, the time left) is Ray Data's bar in a terminal and lines in a
    log file (:func:`parabit.output.counting`)."""
    from parabit.output import counting

    if not texts:
        return np.zeros((0, TEACHER_DIM), dtype=np.float32)
    encoded = teacher_dataset(texts, TeacherEncoder, actors, batch_size)
    vectors = np.zeros((len(texts), TEACHER_DIM), dtype=np.float32)
    with counting(description, total=len(texts), unit=unit, engine_shows=True) as done:
        for batch in encoded.iter_batches(batch_size=None, batch_format="numpy"):
            vectors[batch["index"]] = np.stack(batch["embedding"])
            done.update(len(batch["index"]))
    return vectors


def teacher_dataset(texts: list[str], encoder_class: type, actors: int = 2, batch_size: int = ENCODE_BATCH):
    """A Ray Dataset of ``index``/``text`` rows mapped by ``encoder_class`` (a batch-inference class that loads the
    teacher once per actor) on a pool of up to ``actors`` actors with one CPU each: no more than there are blocks of
    texts (each actor loads the teacher, ~5 s of CPU)."""
    import ray

    from parabit.ray_runtime import init_ray

    init_ray()
    table = pa.table({"index": np.arange(len(texts)), "text": texts})
    rows = batch_size * 8  # blocks of a few batches: every actor has work, and progress is seen early
    # Blocks made here, not by repartition: its split tasks would wait for CPUs the actor pool holds.
    blocks = [table.slice(start, rows) for start in range(0, len(texts), rows)]
    # (No constructor arguments: Ray keeps those in the object store and warns that a restarted actor may lose them.)
    pool = ray.data.ActorPoolStrategy(size=min(actors, len(blocks)))
    return ray.data.from_arrow(blocks).map_batches(encoder_class, batch_size=batch_size, batch_format="numpy",
                                                   compute=pool, num_cpus=1)
