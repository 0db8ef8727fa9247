"""A transformer encoder from a local Hugging Face checkpoint folder (all-MiniLM-L6-v2, XLM-R, a multilingual MiniLM,
a user's own domain model), and the embedder that carries it with its own tokenizer: text in, one vector per
sentence out.

The encoder keeps the contract of every encoder (``encoder(ids [B, T], lengths [B]) -> [B, output_dim]``, the ids
being the checkpoint's own word pieces, special tokens included): the attention mask and the pooling go by
``lengths``, so whatever sits past a sentence's end changes nothing. Its sentence vector is the checkpoint's pooling
(sentence-transformers' ``1_Pooling/config.json`` when the folder has one: mean, CLS or max; mean otherwise) and,
when the checkpoint says so (a ``Normalize`` module in ``modules.json``), the unit vector. A checkpoint trained with
an input prefix (multilingual-e5-small's ``query: ``: sentence-transformers' default prompt) gets it before every
sentence, in training and in the exported model alike.

Its word-piece table is the checkpoint's token embedding; with ``sparse=True`` it takes row-sparse gradients (only
the pieces of the batch), which the kernel exchanges as touched rows beside the dense gradients of the layers: a
250k-piece XLM-R table is not all-reduced every step. What the sentence vector does not use (a BERT checkpoint's
pooler head) is frozen, so every trainable parameter gets a gradient.

Nothing is downloaded: the folder is read with ``local_files_only`` and the Hub offline. ``transformers`` (the extra
``parabit[neural]``, or ``[teacher]``) is imported only here, when a transformer is built.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import nn

from parabit.encoders.base import SentenceEncoder
from parabit.encoders.pooling import POOLINGS

TRANSFORMER_FORMAT = "parabit-transformer-1"
CHECKPOINT_DIR = "transformer"  # the Hugging Face checkpoint inside a saved embedder folder
POOLING_MODES = ("mean", "cls", "max")
# sentence-transformers' pooling flags (1_Pooling/config.json) by parabit's pooling name.
SENTENCE_TRANSFORMERS_POOLING = {"mean": "pooling_mode_mean_tokens", "cls": "pooling_mode_cls_token",
                                 "max": "pooling_mode_max_tokens"}
NORMALIZE_MODULE = "sentence_transformers.models.Normalize"
PROMPTS_FILE = "config_sentence_transformers.json"  # sentence-transformers' prompts and the default one
PROMPT_NAME = "query"  # the name a prefix is saved under as the default prompt
# The distributions an exported transformer needs beside those of every parabit model (export.pyfunc).
REQUIREMENTS = ("transformers", "tokenizers", "safetensors")
ENCODE_BATCH = 64  # sentences per forward pass when encoding (sorted by length, so batches pad little)


def offline_transformers():
    """``transformers``, quiet and offline (a checkpoint is a local folder; a missing file must fail, not download)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    # The tokenizer's own threads, once used, make every later fork (Ray Data, a test's subprocess) print a warning.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import transformers
    except ImportError:
        raise ValueError("the transformer encoder needs the transformers package: install the extra with "
                         "`.venv/bin/pip install -c constraints.txt -e '.[neural]'`") from None
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    return transformers


def checkpoint_settings(checkpoint: str | Path) -> dict:
    """What a checkpoint folder says about its sentence vector: ``pooling`` (sentence-transformers' pooling config,
    else ``mean``), ``normalize`` (a Normalize module in ``modules.json``), ``max_length`` (its
    ``sentence_bert_config.json`` ``max_seq_length``, else None) and ``prefix`` (the text of its default prompt in
    ``config_sentence_transformers.json``, else ``""``). Raises ValueError naming the folder when it is not a Hugging
    Face checkpoint."""
    folder = Path(checkpoint)
    if not (folder / "config.json").is_file():
        raise ValueError(f"{folder}: not a Hugging Face checkpoint folder (no config.json); give the folder that "
                         "holds the model's config.json, weights and tokenizer files")
    pooling = "mean"
    pooling_file = folder / "1_Pooling" / "config.json"
    if pooling_file.is_file():
        flags = json.loads(pooling_file.read_text())
        chosen = [name for name, key in SENTENCE_TRANSFORMERS_POOLING.items() if flags.get(key)]
        pooling = chosen[0] if len(chosen) == 1 else "mean"
    modules = folder / "modules.json"
    normalize = modules.is_file() and any(m.get("type") == NORMALIZE_MODULE for m in json.loads(modules.read_text()))
    sbert = folder / "sentence_bert_config.json"
    max_length = json.loads(sbert.read_text()).get("max_seq_length") if sbert.is_file() else None
    prompts = json.loads((folder / PROMPTS_FILE).read_text()) if (folder / PROMPTS_FILE).is_file() else {}
    prefix = (prompts.get("prompts") or {}).get(prompts.get("default_prompt_name") or "", "")
    return {"pooling": pooling, "normalize": bool(normalize), "max_length": max_length, "prefix": prefix}


class CheckpointTokenizer:
    """A checkpoint's own tokenizer as parabit reads it: ``tokenizer(texts) -> (ids [N, T] int64, lengths [N])``,
    each text after ``prefix`` (None: the checkpoint's, :func:`checkpoint_settings`) as word pieces, special tokens
    included, cut at ``max_length`` (None: the checkpoint's ``max_seq_length``, else its positions; never more than
    its positions), padded with ``pad_id`` to the longest. ``hf`` is the Hugging Face tokenizer itself."""

    def __init__(self, checkpoint: str | Path, max_length: int | None = None, prefix: str | None = None):
        transformers = offline_transformers()
        settings = checkpoint_settings(checkpoint)
        self.prefix = settings["prefix"] if prefix is None else prefix
        self.hf = transformers.AutoTokenizer.from_pretrained(str(checkpoint), local_files_only=True)
        config = transformers.AutoConfig.from_pretrained(str(checkpoint), local_files_only=True)
        positions = getattr(config, "max_position_embeddings", None) or self.hf.model_max_length
        self.max_length = min(max_length or settings["max_length"] or positions, positions)
        self.pad_id = self.hf.pad_token_id if self.hf.pad_token_id is not None else 0

    def __call__(self, texts: Sequence[str], batch: int = 4096) -> tuple[np.ndarray, np.ndarray]:
        pieces: list[list[int]] = []
        for start in range(0, len(texts), batch):
            pieces += self.hf([self.prefix + text for text in texts[start:start + batch]], truncation=True,
                              max_length=self.max_length, add_special_tokens=True)["input_ids"]
        lengths = np.fromiter((len(p) for p in pieces), dtype=np.int64, count=len(pieces))
        ids = np.full((len(pieces), int(lengths.max(initial=1))), self.pad_id, dtype=np.int64)
        for row, piece in enumerate(pieces):
            ids[row, :len(piece)] = piece
        return ids, lengths


class TransformerEncoder(SentenceEncoder):
    """A Hugging Face checkpoint as a sentence encoder: ``ids [B, T], lengths [B] -> [B, hidden size]`` (see the module
    docstring). Build with :meth:`from_checkpoint`; ``vocab_size`` and ``dim`` must be the checkpoint's (its
    word-piece table's rows and hidden size: a saved spec is checked against the folder it is rebuilt from).

    ``pooling`` / ``normalize`` / ``max_length`` / ``prefix``: None takes the checkpoint's
    (:func:`checkpoint_settings`; ``max_length`` at most the model's positions). ``tokenizer`` (a
    :class:`CheckpointTokenizer`) is the checkpoint's own; :meth:`tokenize` turns text into the ids and lengths
    :meth:`forward` reads."""

    reads_checkpoint = True

    def __init__(self, vocab_size: int, dim: int, *, checkpoint: str | Path | None = None, pooling: str | None = None,
                 normalize: bool | None = None, max_length: int | None = None, prefix: str | None = None,
                 sparse: bool = False, initial_vectors: torch.Tensor | None = None):
        if checkpoint is None:
            raise ValueError("the transformer encoder reads a Hugging Face checkpoint folder (checkpoint=...): train "
                             "it with recipe `transformer` (jobs/configs/bilingual/transformer.yaml), whose "
                             "model.checkpoint names the folder")
        if initial_vectors is not None:
            raise ValueError("the transformer encoder starts from its checkpoint's weights, not from word vectors")
        super().__init__(vocab_size, dim, word_table=False)
        transformers = offline_transformers()
        settings = checkpoint_settings(checkpoint)
        self.model = transformers.AutoModel.from_pretrained(str(checkpoint), local_files_only=True,
                                                            dtype=torch.float32)
        self.tokenizer = CheckpointTokenizer(checkpoint, max_length, prefix)
        config = self.model.config
        rows = self.model.get_input_embeddings().num_embeddings
        if (rows, config.hidden_size) != (vocab_size, dim):
            raise ValueError(f"{checkpoint}: its word-piece table has {rows} rows and its model {config.hidden_size} "
                             f"dimensions, not the {vocab_size} and {dim} asked for")
        self.pooling = pooling or settings["pooling"]
        if self.pooling not in POOLING_MODES:
            raise ValueError(f"pooling must be one of {', '.join(POOLING_MODES)}; got {self.pooling!r}")
        self.normalize = settings["normalize"] if normalize is None else normalize
        self.max_length, self.pad_id = self.tokenizer.max_length, self.tokenizer.pad_id
        self.prefix = self.tokenizer.prefix
        self.model.get_input_embeddings().sparse = sparse
        for head in ("pooler",):  # computed by the model, never read by the sentence vector: frozen
            module = getattr(self.model, head, None)
            if isinstance(module, nn.Module):
                module.requires_grad_(False)

    @classmethod
    def from_checkpoint(cls, checkpoint: str | Path, **options) -> "TransformerEncoder":
        """The encoder of ``checkpoint`` (its vocabulary size and hidden size read from the folder)."""
        checkpoint_settings(checkpoint)  # a folder that is no checkpoint: one line naming it
        config = offline_transformers().AutoConfig.from_pretrained(str(checkpoint), local_files_only=True)
        return cls(config.vocab_size, config.hidden_size, checkpoint=checkpoint, **options)

    @property
    def embedding(self) -> nn.Embedding:
        """The word-piece table (the checkpoint's token embeddings)."""
        return self.model.get_input_embeddings()

    @property
    def options(self) -> dict:
        """The options that rebuild this encoder from its saved checkpoint (what a spec records)."""
        return {"pooling": self.pooling, "normalize": self.normalize, "max_length": self.max_length,
                "prefix": self.prefix}

    def tokenize(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(ids [N, T] int64, lengths [N] int64)`` of ``texts`` (:class:`CheckpointTokenizer`)."""
        return self.tokenizer(texts)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        mask = self.mask(ids, lengths)
        # Past a sentence's end: the pad id, whatever the caller left there (it could lie outside the table).
        ids = ids.masked_fill(~mask, self.pad_id)
        states = self.model(input_ids=ids, attention_mask=mask.long()).last_hidden_state
        if self.pooling == "cls":
            pooled = states[:, 0]
        else:
            pooled = POOLINGS[self.pooling](states, mask)
        pooled = pooled.float()  # under autocast the states are bfloat16; losses and similarities read float32
        return nn.functional.normalize(pooled, dim=-1) if self.normalize else pooled


class TransformerEmbedder:
    """``encode(list[str]) -> np.ndarray [N, dim]`` with a :class:`TransformerEncoder` and its own tokenizer: what a
    transformer run evaluates, exports and registers (the counterpart of :class:`parabit.embedder.SentenceEmbedder`
    for a model that brings its tokenizer).

    One tokenizer reads every language, so ``lang`` (one code, or one per sentence) is checked against ``langs`` (the
    languages the model was trained for; the first is ``lang``) and changes nothing else; :meth:`detect` is not
    needed to encode and says ``lang``. Saved as ``embedder.json`` plus the Hugging Face checkpoint folder
    ``transformer/`` (weights, config, tokenizer) with sentence-transformers' module files, so the folder also
    loads with ``SentenceTransformer(folder / "transformer")``."""

    requirements = REQUIREMENTS

    def __init__(self, encoder: TransformerEncoder, langs: Sequence[str] = ("en",)):
        self.encoder = encoder
        self.langs = tuple(langs)
        self.lang = self.langs[0]
        self.spec = {"encoder": "transformer", "vocab_size": encoder.vocab_size, "dim": encoder.dim,
                     "options": encoder.options}

    def detect(self, sentences: Sequence[str]) -> list[str]:
        return [self.lang] * len(sentences)

    def _check_languages(self, lang: str | Sequence[str | None] | None, count: int) -> None:
        given = [lang] if isinstance(lang, str) else [] if lang is None else list(lang)
        if lang is not None and not isinstance(lang, str) and len(given) != count:
            raise ValueError(f"{len(given)} languages for {count} sentences; give one per sentence")
        unknown = sorted({code for code in given if code is not None} - set(self.langs))
        if unknown:
            raise ValueError(f"this model reads {list(self.langs)}, not {unknown[0]!r}")

    @torch.inference_mode()
    def encode(self, sentences: Sequence[str], batch_size: int = ENCODE_BATCH,
               lang: str | Sequence[str | None] | None = None) -> np.ndarray:
        """One vector per sentence (float32); each distinct sentence is encoded once, batches sorted by length."""
        sentences = list(sentences)
        self._check_languages(lang, len(sentences))
        if not sentences:
            return np.zeros((0, self.encoder.output_dim), dtype=np.float32)
        where, distinct = pd.factorize(np.asarray(sentences, dtype=object), use_na_sentinel=False)
        ids, lengths = self.encoder.tokenize([str(text) for text in distinct])
        was_training = self.encoder.training
        self.encoder.eval()
        device = next(self.encoder.parameters()).device
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(distinct), self.encoder.output_dim), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            width = int(lengths[rows].max())
            out[rows] = self.encoder(torch.from_numpy(ids[rows, :width]).to(device),
                                     torch.from_numpy(lengths[rows]).to(device)).cpu().numpy()
        self.encoder.train(was_training)
        return out[where]

    def __call__(self, sentences: Sequence[str]) -> np.ndarray:
        return self.encode(sentences)

    # -- persistence -----------------------------------------------------------------------------------------
    def save(self, directory: str | Path) -> Path:
        """Write ``embedder.json`` and the checkpoint folder ``transformer/`` into ``directory``."""
        directory = Path(directory)
        checkpoint = directory / CHECKPOINT_DIR
        checkpoint.mkdir(parents=True, exist_ok=True)
        self.encoder.model.save_pretrained(checkpoint)
        self.encoder.tokenizer.hf.save_pretrained(checkpoint)
        write_sentence_transformers_modules(checkpoint, dim=self.encoder.dim, **self.encoder.options)
        meta = {"format": TRANSFORMER_FORMAT, "spec": self.spec, "langs": list(self.langs)}
        (directory / "embedder.json").write_text(json.dumps(meta, indent=1))
        return directory

    @classmethod
    def load(cls, directory: str | Path, device: str | None = None) -> "TransformerEmbedder":
        """The embedder saved in ``directory``, on ``device`` (default: CUDA when this process has it, else CPU)."""
        directory = Path(directory)
        meta = json.loads((directory / "embedder.json").read_text())
        if meta.get("format") != TRANSFORMER_FORMAT:
            raise ValueError(f"{directory}: not a parabit transformer embedder (format {meta.get('format')!r})")
        spec = meta["spec"]
        encoder = TransformerEncoder(spec["vocab_size"], spec["dim"], checkpoint=directory / CHECKPOINT_DIR,
                                     **spec["options"])
        encoder.to(device or ("cuda" if torch.cuda.is_available() else "cpu")).eval()
        return cls(encoder, meta["langs"])


def write_sentence_transformers_modules(checkpoint: Path, *, dim: int, pooling: str, normalize: bool,
                                        max_length: int, prefix: str = "") -> None:
    """sentence-transformers' module files beside a checkpoint: ``pooling`` of its ``dim``-wide states, the unit
    vector when ``normalize``, the length cut, and ``prefix`` as the default prompt (none when empty); what
    :func:`checkpoint_settings` reads back, and what ``SentenceTransformer(checkpoint)`` applies."""
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": NORMALIZE_MODULE})
        (checkpoint / "2_Normalize").mkdir(exist_ok=True)
    (checkpoint / "modules.json").write_text(json.dumps(modules, indent=1))
    (checkpoint / "1_Pooling").mkdir(exist_ok=True)
    flags = {"word_embedding_dimension": dim,
             **{key: name == pooling for name, key in SENTENCE_TRANSFORMERS_POOLING.items()},
             "pooling_mode_mean_sqrt_len_tokens": False}
    (checkpoint / "1_Pooling" / "config.json").write_text(json.dumps(flags, indent=1))
    (checkpoint / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": max_length,
                                                                      "do_lower_case": False}, indent=1))
    if prefix:
        prompts = {"prompts": {PROMPT_NAME: prefix}, "default_prompt_name": PROMPT_NAME,
                   "similarity_fn_name": "cosine"}
        (checkpoint / PROMPTS_FILE).write_text(json.dumps(prompts, indent=1))
