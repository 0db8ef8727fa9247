"""Build a small Hugging Face Marian model directory offline, for tests, smoke runs and benchmarks of ``hf-marian``.

No pretrained Marian weights ship with parabit and nothing may be downloaded, so this makes a *real* model directory
in the exact layout of a Helsinki-NLP ``opus-mt-*`` download, from bitext alone:

- one SentencePiece model trained on both sides of the pairs, saved as ``source.spm`` and ``target.spm``;
- ``vocab.json`` in Marian's order (``</s>`` 0, ``<unk>`` 1, the pieces, ``<pad>`` last; pad is also the decoder
  start token, as in opus-mt);
- a small randomly initialised ``MarianMTModel`` (fixed seed), optionally trained for ``train_steps`` Adam steps on
  the pairs, saved with ``save_pretrained`` next to the tokenizer files (``tokenizer_config.json`` records the
  source and target languages, which :class:`parabit.translate.hf_marian.HFMarianTranslator` checks).

The result translates badly (it is tiny and barely trained) but exercises exactly the code path of a real opus-mt
model. ``scripts/make_tiny_marian.py`` is the command-line front end.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path

SPECIALS = ("</s>", "<unk>")
PAD = "<pad>"


def train_sentencepiece(texts: Sequence[str], vocab_size: int, seed_sentences: int = 1_000_000) -> bytes:
    """A unigram SentencePiece model over ``texts``, as the bytes of the ``.spm`` file."""
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(texts), model_writer=model, vocab_size=vocab_size,
                                   model_type="unigram", character_coverage=1.0, input_sentence_size=seed_sentences,
                                   hard_vocab_limit=False, minloglevel=2, num_threads=1)
    return model.getvalue()


def marian_vocab(spm_bytes: bytes) -> dict[str, int]:
    """Marian's ``vocab.json`` for a SentencePiece model: ``</s>``, ``<unk>``, every ordinary piece, ``<pad>``."""
    import sentencepiece as spm

    processor = spm.SentencePieceProcessor(model_proto=spm_bytes)
    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())
              if not (processor.is_control(i) or processor.is_unknown(i))]
    tokens = [*SPECIALS, *(p for p in pieces if p not in SPECIALS), PAD]
    return {token: i for i, token in enumerate(tokens)}


def build_tiny_marian(pairs: Sequence[tuple[str, str]], out_dir: str | Path, *, src: str = "es", tgt: str = "en",
                      vocab_size: int = 400, d_model: int = 32, layers: int = 1, train_steps: int = 0,
                      batch_size: int = 32, learning_rate: float = 3e-3, init_std: float = 1.0,
                      seed: int = 13) -> Path:
    """Write a Marian model directory translating ``src``→``tgt`` to ``out_dir`` and return its path.

    ``pairs`` are ``(source sentence, target sentence)`` tuples; they train the SentencePiece model and, with
    ``train_steps`` > 0, the network (cycling over the pairs ``batch_size`` at a time). Deterministic for a seed.
    """
    import torch
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    if not pairs:
        raise ValueError("build_tiny_marian needs at least one (source, target) pair")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    spm_bytes = train_sentencepiece([text for pair in pairs for text in pair], vocab_size)
    for name in ("source.spm", "target.spm"):
        (out / name).write_bytes(spm_bytes)
    vocab = marian_vocab(spm_bytes)
    (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False, indent=1), encoding="utf-8")
    tokenizer = MarianTokenizer(source_spm=str(out / "source.spm"), target_spm=str(out / "target.spm"),
                                vocab=str(out / "vocab.json"), source_lang=src, target_lang=tgt)

    torch.manual_seed(seed)
    pad = vocab[PAD]
    config = MarianConfig(vocab_size=len(vocab), d_model=d_model, encoder_layers=layers, decoder_layers=layers,
                          encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=2 * d_model,
                          decoder_ffn_dim=2 * d_model, max_position_embeddings=512, pad_token_id=pad,
                          decoder_start_token_id=pad, eos_token_id=vocab["</s>"], forced_eos_token_id=vocab["</s>"],
                          share_encoder_decoder_embeddings=True, init_std=init_std)
    model = MarianMTModel(config)
    if train_steps > 0:
        _train(model, tokenizer, pairs, train_steps, batch_size, learning_rate)
    model.eval()
    model.generation_config.num_beams = 1
    model.generation_config.bad_words_ids = [[pad]]
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def _train(model, tokenizer, pairs: Sequence[tuple[str, str]], steps: int, batch_size: int, lr: float) -> None:
    import torch

    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for step in range(steps):
        start = (step * batch_size) % len(pairs)
        chunk = [pairs[(start + k) % len(pairs)] for k in range(min(batch_size, len(pairs)))]
        inputs = tokenizer([s for s, _ in chunk], text_target=[t for _, t in chunk], padding=True, truncation=True,
                           max_length=64, return_tensors="pt")
        inputs["labels"][inputs["labels"] == tokenizer.pad_token_id] = -100  # padding is not a target
        loss = model(**inputs).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
