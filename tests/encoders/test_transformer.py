"""The transformer encoder on the packaged all-MiniLM-L6-v2 and real Tatoeba sentences: the vectors are
sentence-transformers' own, the encoder keeps every encoder's contract (padding and whatever lies past a sentence's end
change nothing, a sentence encodes the same alone as in a batch, bad lengths are refused), gradients reach every
trainable parameter (the word-piece table's as rows of the batch only), a prefix goes before every sentence, and the
saved embedder loads back, also with sentence-transformers itself."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from parabit.data.bitext import read_tatoeba
from parabit.encoders import TransformerEmbedder, TransformerEncoder
from parabit.encoders.transformer import checkpoint_settings
from parabit.teacher.model import packaged_checkpoint

PAIRS = read_tatoeba(lang="es")[::997][:40]
SENTENCES = [p.en for p in PAIRS] + [p.foreign for p in PAIRS]


@pytest.fixture(scope="module")
def checkpoint():
    return packaged_checkpoint()


@pytest.fixture(scope="module")
def encoder(checkpoint) -> TransformerEncoder:
    return TransformerEncoder.from_checkpoint(checkpoint).eval()


def batch(encoder: TransformerEncoder, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    ids, lengths = encoder.tokenize(texts)
    return torch.from_numpy(ids), torch.from_numpy(lengths)


def test_the_checkpoint_settings_are_read_from_its_sentence_transformers_files(checkpoint, encoder):
    assert checkpoint_settings(checkpoint) == {"pooling": "mean", "normalize": True, "max_length": 256, "prefix": ""}
    assert (encoder.vocab_size, encoder.dim, encoder.output_dim) == (30522, 384, 384)
    assert encoder.options == {"pooling": "mean", "normalize": True, "max_length": 256, "prefix": ""}


# Slow (~15 s on a loaded 2-core machine): imports sentence-transformers and loads its own copy of the model.
@pytest.mark.slow
def test_its_vectors_are_the_sentence_transformer_s(checkpoint, encoder):
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(checkpoint), device="cpu").encode(SENTENCES, convert_to_numpy=True)
    ours = TransformerEmbedder(encoder, ("en", "es")).encode(SENTENCES)
    np.testing.assert_allclose(ours, reference, rtol=0, atol=2e-5)


def test_padding_and_whatever_lies_past_a_sentence_change_nothing(encoder):
    ids, lengths = batch(encoder, SENTENCES[:6])
    with torch.no_grad():
        plain = encoder(ids, lengths)
        wider = encoder(torch.cat([ids, torch.full((len(ids), 5), encoder.pad_id)], dim=1), lengths)
        past = torch.arange(ids.size(1)) >= lengths.unsqueeze(1)
        garbage = encoder(torch.where(past, torch.randint(10**6, ids.shape), ids), lengths)  # ids off the table too
        alone = torch.cat([encoder(ids[row:row + 1, :int(lengths[row])], lengths[row:row + 1]) for row in range(6)])
    torch.testing.assert_close(wider, plain, rtol=0, atol=1e-5)
    torch.testing.assert_close(garbage, plain, rtol=0, atol=1e-5)
    torch.testing.assert_close(alone, plain, rtol=0, atol=1e-5)


def test_lengths_outside_the_padded_width_are_refused(encoder):
    ids, _ = batch(encoder, SENTENCES[:2])
    for lengths in ([ids.size(1), 0], [ids.size(1) + 1, 2]):
        with pytest.raises(ValueError, match="length"):
            encoder(ids, torch.tensor(lengths))


def test_gradients_reach_every_trainable_parameter_and_only_the_batch_s_word_pieces(checkpoint):
    torch.manual_seed(0)
    encoder = TransformerEncoder.from_checkpoint(checkpoint, sparse=True)
    ids, lengths = batch(encoder, SENTENCES[:8])
    encoder(ids, lengths).pow(2).sum().backward()
    trainable = [(name, p) for name, p in encoder.named_parameters() if p.requires_grad]
    frozen = [name for name, p in encoder.named_parameters() if not p.requires_grad]
    assert frozen and all(name.startswith("model.pooler.") for name in frozen)  # the head no vector reads
    for name, parameter in trainable:
        assert parameter.grad is not None, name
        grad = parameter.grad.to_dense()
        assert torch.isfinite(grad).all() and grad.abs().sum() > 0, name
    table = encoder.embedding.weight.grad
    assert table.is_sparse  # exchanged as touched rows by the kernel
    rows = set(torch.nonzero(table.to_dense().abs().sum(dim=1)).flatten().tolist())
    real = torch.arange(ids.size(1)) < lengths.unsqueeze(1)
    assert rows and rows <= set(ids[real].tolist())


def test_pooling_normalisation_and_length_cut_follow_the_options(checkpoint, encoder):
    ids, lengths = batch(encoder, SENTENCES[:4])
    with torch.no_grad():
        mean = encoder(ids, lengths)
        raw = TransformerEncoder.from_checkpoint(checkpoint, normalize=False)(ids, lengths)
        cls = TransformerEncoder.from_checkpoint(checkpoint, pooling="cls")(ids, lengths)
    torch.testing.assert_close(mean.norm(dim=1), torch.ones(4), rtol=0, atol=1e-5)
    assert not torch.allclose(raw.norm(dim=1), torch.ones(4), atol=1e-2)
    torch.testing.assert_close(torch.nn.functional.normalize(raw, dim=-1), mean, rtol=0, atol=1e-5)
    assert not torch.allclose(cls, mean, atol=1e-2)
    short = TransformerEncoder.from_checkpoint(checkpoint, max_length=5)
    assert short.tokenize(["a much longer sentence than five word pieces allow"])[1].tolist() == [5]
    with pytest.raises(ValueError, match="pooling must be one of"):
        TransformerEncoder.from_checkpoint(checkpoint, pooling="sum")


def test_under_bfloat16_autocast_the_vectors_stay_float32_and_close(encoder):
    ids, lengths = batch(encoder, SENTENCES[:4])
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        mixed = encoder(ids, lengths)
    with torch.no_grad():
        exact = encoder(ids, lengths)
    assert mixed.dtype == torch.float32
    assert torch.nn.functional.cosine_similarity(mixed, exact).min() > 0.99


@pytest.mark.slow  # as above: sentence-transformers loads the saved folder
def test_the_saved_embedder_loads_back_and_with_sentence_transformers(encoder, tmp_path):
    from sentence_transformers import SentenceTransformer

    embedder = TransformerEmbedder(encoder, ("en", "es"))
    expected = embedder.encode(SENTENCES)
    folder = embedder.save(tmp_path / "embedder")
    meta = json.loads((folder / "embedder.json").read_text())
    assert meta["format"] == "parabit-transformer-1" and meta["langs"] == ["en", "es"]
    loaded = TransformerEmbedder.load(folder, device="cpu")
    np.testing.assert_array_equal(loaded.encode(SENTENCES), expected)
    assert loaded.spec == embedder.spec and loaded.langs == ("en", "es")
    sentence_transformer = SentenceTransformer(str(folder / "transformer"), device="cpu")
    np.testing.assert_allclose(sentence_transformer.encode(SENTENCES), expected, rtol=0, atol=2e-5)


def test_a_prefix_goes_before_every_sentence_and_is_saved_as_the_default_prompt(checkpoint, encoder, tmp_path):
    prefixed = TransformerEncoder.from_checkpoint(checkpoint, prefix="query: ")
    texts = SENTENCES[:3]
    np.testing.assert_array_equal(prefixed.tokenize(texts)[0], encoder.tokenize([f"query: {t}" for t in texts])[0])
    folder = TransformerEmbedder(prefixed, ("en", "es")).save(tmp_path / "embedder")
    assert checkpoint_settings(folder / "transformer")["prefix"] == "query: "  # what sentence-transformers applies
    assert TransformerEmbedder.load(folder, device="cpu").encoder.options == prefixed.options


def test_languages_are_checked_and_change_nothing(encoder):
    embedder = TransformerEmbedder(encoder, ("en", "es"))
    texts = SENTENCES[:3]
    np.testing.assert_array_equal(embedder.encode(texts, lang="es"), embedder.encode(texts))
    np.testing.assert_array_equal(embedder.encode(texts, lang=["en", None, "es"]), embedder.encode(texts))
    with pytest.raises(ValueError, match="reads \\['en', 'es'\\], not 'fr'"):
        embedder.encode(texts, lang="fr")
    with pytest.raises(ValueError, match="2 languages for 3 sentences"):
        embedder.encode(texts, lang=["en", "es"])
    assert embedder.encode([]).shape == (0, 384)
    repeated = embedder.encode([texts[0], texts[1], texts[0]])
    np.testing.assert_array_equal(repeated[0], repeated[2])


def test_a_folder_that_is_no_checkpoint_is_named(tmp_path):
    with pytest.raises(ValueError, match=f"{tmp_path}: not a Hugging Face checkpoint folder"):
        TransformerEncoder.from_checkpoint(tmp_path)
