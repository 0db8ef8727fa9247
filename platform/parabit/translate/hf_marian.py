"""Neural MT with a Hugging Face Marian model directory the user provides (e.g. a local copy of
``Helsinki-NLP/opus-mt-es-en``), on the GPU when there is one, with the translation cost of every output token.

Offline only: the directory is checked when the configuration loads (``config.json``, the weights, ``source.spm``,
``target.spm``, ``vocab.json``), and model and tokenizer are loaded with ``local_files_only=True`` under
``HF_HUB_OFFLINE=1``, so nothing is ever downloaded. One model load per :class:`HFMarianTranslator` (one per Ray
Data actor); sentences are translated ``batch_size`` at a time with ``generate``.

Translation cost: ``generate(..., return_dict_in_generate=True, output_logits=True)`` keeps the model's raw logits of
every decoding step, and ``model.compute_transition_scores(..., normalize_logits=True)`` turns them into the
log-probability of each emitted token (following the chosen beam). The cost of token *t* is ``-log p(y_t | y_<t, x)``
for every generated token up to and including ``</s>`` (the decoder start token is not generated and has no cost);
``TranslationBatch.costs[i]`` is that list, and the ``translation_cost`` filter scores its mean. The raw logits are
used, not generate's processed scores, so the cost is the model's own probability, exactly what a forced forward
pass over the output (``model(input_ids, labels=output)``) gives; processors such as the ban on ``<pad>`` decide what
is generated, not what it costs.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from parabit.paths import project_path
from parabit.translate.apertium import ISO3, normalise
from parabit.translate.base import TranslationBatch, Translator, TranslatorError

ENGINE = "hf-marian"
INSTALL_HINT = ("install them with `.venv/bin/pip install -c constraints.txt transformers==5.23.0 "
                "sentencepiece==0.2.3 sacremoses==0.2.0`")
REQUIRED_FILES = ("config.json", "source.spm", "target.spm", "vocab.json")
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")
DEVICES = ("auto", "cpu", "cuda")
OPTIONS = ("batch_size", "device", "max_new_tokens", "model_dir", "num_beams")
DOWNLOAD_HINT = ("download an opus-mt model once, outside the pipeline (e.g. `hf download Helsinki-NLP/opus-mt-es-en "
                 "--local-dir models/opus-mt-es-en` in the project root), and set translation.options.model_dir to "
                 "that folder (a relative path is read from the project root)")


def _transformers():
    """The ``transformers`` module, forced offline; a :class:`TranslatorError` saying how to install it if missing."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        importlib.import_module("sentencepiece")  # MarianTokenizer needs it; fail here, with the install hint
        import transformers
    except ImportError as err:
        raise TranslatorError(f"translation engine {ENGINE!r} needs the Python packages transformers and "
                              f"sentencepiece ({err}); {INSTALL_HINT}") from None
    return transformers


def check_model_dir(model_dir: Any) -> Path:
    """``model_dir`` (relative: under the project root) as the path of a Marian model directory;
    :class:`TranslatorError` naming it and what is missing."""
    if not isinstance(model_dir, (str, os.PathLike)) or not str(model_dir):
        raise TranslatorError(f"engine {ENGINE!r} needs options.model_dir, the folder of a Hugging Face Marian model "
                              f"(got {model_dir!r}); {DOWNLOAD_HINT}")
    path = project_path(model_dir)  # the same folder for the driver and every actor
    if not path.is_dir():
        raise TranslatorError(f"engine {ENGINE!r}: model_dir {str(path)!r} is not a directory; {DOWNLOAD_HINT}")
    missing = [name for name in REQUIRED_FILES if not (path / name).is_file()]
    if not any((path / name).is_file() for name in WEIGHT_FILES):
        missing.append(" or ".join(WEIGHT_FILES[::2]))
    if missing:
        raise TranslatorError(f"engine {ENGINE!r}: {str(path)!r} is not a Hugging Face Marian model directory; "
                              f"missing {', '.join(missing)}; {DOWNLOAD_HINT}")
    return path


def model_languages(path: Path) -> tuple[str | None, str | None]:
    """The (source, target) languages ``tokenizer_config.json`` declares, or None where it does not."""
    config_file = path / "tokenizer_config.json"
    try:
        config = json.loads(config_file.read_text(encoding="utf-8")) if config_file.is_file() else {}
    except (OSError, ValueError) as err:
        raise TranslatorError(f"engine {ENGINE!r}: cannot read {str(config_file)!r}: {err}") from None
    return config.get("source_lang"), config.get("target_lang")


def _mismatch(declared: Any, wanted: str) -> bool:
    """A declared language that is a known single ISO code and not ``wanted`` (multilingual groups pass)."""
    known = set(ISO3) | set(ISO3.values())
    return isinstance(declared, str) and declared in known and declared not in (wanted, ISO3.get(wanted))


def check_direction(path: Path, src: str, tgt: str, declared: tuple[str | None, str | None] | None = None) -> None:
    """Refuse ``src``-``tgt`` when the model declares other languages (``declared``: as read by
    :func:`model_languages`, read from ``path`` when not given)."""
    declared = declared if declared is not None else model_languages(path)
    if _mismatch(declared[0], src) or _mismatch(declared[1], tgt):
        raise TranslatorError(f"engine {ENGINE!r}: the model in {str(path)!r} translates {declared[0]}-{declared[1]} "
                              f"(tokenizer_config.json), not {src}-{tgt}; point model_dir at a {src}-{tgt} model")


def _check_int(name: str, value: Any, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise TranslatorError(f"engine {ENGINE!r}: option {name} must be an integer >= {minimum}, got {value!r}")


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when torch sees a GPU, else ``cpu``; ``cuda`` without a GPU is an error."""
    import torch

    if device not in DEVICES:
        raise TranslatorError(f"engine {ENGINE!r}: device {device!r} is unknown; choose one of {list(DEVICES)}")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise TranslatorError(f"engine {ENGINE!r}: device 'cuda' was asked for but torch sees no GPU here "
                              f"(torch {torch.__version__}); use device 'auto' or 'cpu', or give the actors a GPU "
                              "(translation.gpus_per_actor)")
    return device


class HFMarianTranslator(Translator):
    """Translates with the Marian model in ``model_dir`` and reports per-token costs (see the module docstring).

    ``batch_size`` sentences per ``generate`` call; ``num_beams`` 1 is greedy search; ``max_new_tokens`` caps each
    output; ``device`` is ``auto`` (GPU if available), ``cpu`` or ``cuda``. The direction is the model's: when its
    ``tokenizer_config.json`` names the languages, another ``src``/``tgt`` raises :class:`TranslatorError`.
    """

    engine = ENGINE
    provides_cost = True

    def __init__(self, *, model_dir: str, batch_size: int = 32, num_beams: int = 1, max_new_tokens: int = 256,
                 device: str = "auto"):
        self.check_settings(dict(model_dir=model_dir, batch_size=batch_size, num_beams=num_beams,
                                 max_new_tokens=max_new_tokens, device=device))
        self.path = check_model_dir(model_dir)
        self.languages = model_languages(self.path)  # read once, checked on every batch
        self.batch_size = batch_size
        transformers = _transformers()
        self.device = resolve_device(device)
        self.tokenizer = transformers.MarianTokenizer.from_pretrained(self.path, local_files_only=True)
        self.model = transformers.AutoModelForSeq2SeqLM.from_pretrained(self.path, local_files_only=True)
        self.model.to(self.device).eval()
        # The model's own generation settings (banned tokens, forced end, ...) with this translator's search; its
        # max_length is dropped because max_new_tokens is the cap here.
        self.generation = copy.deepcopy(self.model.generation_config)
        self.generation.update(num_beams=num_beams, do_sample=False, max_new_tokens=max_new_tokens, max_length=None,
                               return_dict_in_generate=True, output_scores=True, output_logits=True)

    @classmethod
    def check_settings(cls, options: Mapping[str, Any]) -> None:
        """Option names and values (not the files): :class:`TranslatorError` saying what to change."""
        unknown = set(options) - set(OPTIONS)
        if unknown:
            raise TranslatorError(f"engine {ENGINE!r} has no option(s) {sorted(unknown)}; its options are "
                                  f"{list(OPTIONS)}")
        for name in ("batch_size", "num_beams", "max_new_tokens"):
            if name in options:
                _check_int(name, options[name])
        if options.get("device", "auto") not in DEVICES:
            raise TranslatorError(f"engine {ENGINE!r}: device {options['device']!r} is unknown; choose one of "
                                  f"{list(DEVICES)}")

    @classmethod
    def check_options(cls, src: str, tgt: str, options: Mapping[str, Any]) -> None:
        """Known options with valid values, an installed ``transformers``, and a complete model directory whose
        declared languages (if any) are ``src``→``tgt``. A missing GPU is reported by the actor, not here: the
        machine that loads the configuration need not be the one that translates."""
        cls.check_settings(options)
        path = check_model_dir(options.get("model_dir"))
        _transformers()
        check_direction(path, src, tgt)

    def translate(self, sentences: Sequence[str], src: str, tgt: str) -> TranslationBatch:
        check_direction(self.path, src, tgt, self.languages)
        texts = [normalise(sentence) for sentence in sentences]
        translations: list[str | None] = [None] * len(texts)
        errors: list[str | None] = [None if text else "empty input sentence" for text in texts]
        costs: list[list[float] | None] = [None] * len(texts)
        todo = [i for i, text in enumerate(texts) if text]
        # Tokenised once. Longer inputs would be cut to fit the model's positions: report them instead of translating
        # a fragment.
        token_ids = dict(zip(todo, self.tokenizer([texts[i] for i in todo])["input_ids"] if todo else []))
        limit = self.model.config.max_position_embeddings
        for i, ids in token_ids.items():
            if len(ids) > limit:
                errors[i] = f"input of {len(ids)} tokens is longer than the model's {limit}"
        # Longest first, so each generate call holds sentences of about one length: little padding, and no batch
        # decodes on for one long sentence while the rest are done. Results go back by index.
        todo = sorted((i for i in todo if errors[i] is None), key=lambda i: len(token_ids[i]), reverse=True)
        for start in range(0, len(todo), self.batch_size):
            chunk = todo[start:start + self.batch_size]
            for i, (text, cost) in zip(chunk, self._generate([token_ids[i] for i in chunk])):
                translations[i], costs[i] = text, cost
        return TranslationBatch(translations, errors, costs)

    def _generate(self, token_ids: list[list[int]]) -> list[tuple[str, list[float]]]:
        """Translate tokenised sentences in one ``generate`` call: (translation, per-token costs) per sentence."""
        import torch

        inputs = self.tokenizer.pad({"input_ids": token_ids}, return_tensors="pt").to(self.device)
        with torch.inference_mode():
            out = self.model.generate(**inputs, generation_config=self.generation)
            log_probs = self.model.compute_transition_scores(out.sequences, out.logits,
                                                             getattr(out, "beam_indices", None),
                                                             normalize_logits=True)
        tokens = out.sequences[:, -log_probs.shape[1]:]  # the generated tokens, without the decoder start token
        lengths = output_lengths(tokens, self.model.generation_config.eos_token_id, self.tokenizer.pad_token_id)
        decoded = self.tokenizer.batch_decode(out.sequences, skip_special_tokens=True)
        return [(text.strip(), (-log_probs[row, :n]).float().cpu().tolist())
                for row, (text, n) in enumerate(zip(decoded, lengths))]

    def close(self) -> None:
        self.model = None


def output_lengths(tokens, eos_token_id, pad_token_id) -> list[int]:
    """Per row of generated ``tokens``: how many count, i.e. up to and including the first end-of-sentence token,
    or every token before the padding when generation stopped at ``max_new_tokens``."""
    eos_ids = set(eos_token_id if isinstance(eos_token_id, (list, tuple)) else [eos_token_id])
    lengths = []
    for row in tokens.tolist():
        ends = [k for k, token in enumerate(row) if token in eos_ids]
        lengths.append(ends[0] + 1 if ends else len([token for token in row if token != pad_token_id]))
    return lengths
