"""The hf-marian engine on a real (tiny, offline-built) Marian model directory and real Tatoeba sentences: its costs
equal a forced forward pass over its own output, empty inputs are reported, bad directories fail at config load, and
nothing touches the network."""

from __future__ import annotations

import os
import shutil
import socket

import pytest
import torch

from parabit.data.bitext import read_tatoeba
from parabit.translate import HFMarianTranslator, TranslatorError, build_translator
from parabit.translate.hf_marian import output_lengths

SENTENCES = [p.foreign for p in read_tatoeba(lang="es")[::6001][:6]]


def forced_mean_nll(translator: HFMarianTranslator, sentence: str, num_beams: int, max_new_tokens: int):
    """Independently of the translator's scoring: generate the sentence alone with plain ``generate`` (no scores),
    then the mean token NLL of that output under a forced forward pass (``labels``: the generated tokens up to and
    including </s>, without the decoder start token). Returns (decoded text, mean NLL)."""
    model, tokenizer = translator.model, translator.tokenizer
    inputs = tokenizer([sentence], return_tensors="pt")
    with torch.no_grad():
        sequence = model.generate(**inputs, num_beams=num_beams, do_sample=False, max_new_tokens=max_new_tokens,
                                  max_length=None)[0]
        labels = sequence[1:]
        eos = (labels == model.config.eos_token_id).nonzero()
        labels = labels[: int(eos[0]) + 1] if len(eos) else labels[labels != tokenizer.pad_token_id]
        loss = model(**inputs, labels=labels[None]).loss
    return tokenizer.decode(sequence, skip_special_tokens=True).strip(), float(loss)


@pytest.mark.parametrize("num_beams", [1, 3])
def test_cost_is_the_mean_token_nll_of_a_forced_pass_over_the_output(tiny_marian_dir, num_beams):
    with build_translator("hf-marian", model_dir=str(tiny_marian_dir), batch_size=4, num_beams=num_beams,
                          max_new_tokens=12, device="cpu") as translator:
        batch = translator.translate(SENTENCES, "es", "en")
        assert batch.errors == [None] * len(SENTENCES) and len(batch.costs) == len(SENTENCES)
        means = []
        for sentence, text, costs in zip(SENTENCES, batch.translations, batch.costs):
            expected_text, expected_cost = forced_mean_nll(translator, sentence, num_beams, 12)
            assert text == expected_text
            assert 1 <= len(costs) <= 12 and all(cost >= 0 for cost in costs)
            assert sum(costs) / len(costs) == pytest.approx(expected_cost, abs=1e-4)
            means.append(sum(costs) / len(costs))
    assert len({round(m, 3) for m in means}) > len(SENTENCES) // 2  # costs follow the input, not a constant


def test_empty_inputs_are_reported_and_the_rest_translated(tiny_marian_dir):
    with HFMarianTranslator(model_dir=str(tiny_marian_dir), max_new_tokens=8) as translator:
        batch = translator.translate(["", "Tengo un perro.", " \n\t", "Hola."], "es", "en")
    assert batch.errors[0] == batch.errors[2] == "empty input sentence"
    assert batch.translations[0] is batch.costs[0] is batch.translations[2] is batch.costs[2] is None
    assert batch.failed == [0, 2] and all(batch.costs[i] for i in (1, 3))


def test_an_input_longer_than_the_model_is_reported_not_cut_short(tiny_marian_dir):
    with HFMarianTranslator(model_dir=str(tiny_marian_dir), max_new_tokens=8) as translator:
        batch = translator.translate(["Tengo un perro.", "perro " * 600], "es", "en")
    assert batch.failed == [1] and batch.translations[1] is None and batch.costs[1] is None
    assert batch.errors[1].startswith("input of ") and batch.errors[1].endswith("longer than the model's 512")
    assert batch.translations[0] and batch.costs[0]


def test_nothing_touches_the_network(tiny_marian_dir, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args!r:.200}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    HFMarianTranslator.check_options("es", "en", {"model_dir": str(tiny_marian_dir)})
    with build_translator("hf-marian", model_dir=str(tiny_marian_dir), max_new_tokens=8) as translator:
        assert translator.translate(SENTENCES[:2], "es", "en").errors == [None, None]
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_incomplete_model_dir_is_refused_naming_the_path_and_the_missing_files(tiny_marian_dir, tmp_path):
    broken = tmp_path / "opus-mt-broken"
    shutil.copytree(tiny_marian_dir, broken)
    (broken / "target.spm").unlink()
    (broken / "model.safetensors").unlink()
    with pytest.raises(TranslatorError, match=rf"'{broken}' is not a Hugging Face Marian model directory; missing "
                                              r"target.spm, model.safetensors or pytorch_model.bin"):
        HFMarianTranslator.check_options("es", "en", {"model_dir": str(broken)})
    with pytest.raises(TranslatorError, match=rf"model_dir '{tmp_path / 'nowhere'}' is not a directory"):
        HFMarianTranslator.check_options("es", "en", {"model_dir": str(tmp_path / "nowhere")})
    with pytest.raises(TranslatorError, match=r"needs options.model_dir"):
        HFMarianTranslator.check_options("es", "en", {})


@pytest.mark.parametrize("options, message", [
    ({"beam": 4}, r"no option\(s\) \['beam'\]"),
    ({"num_beams": 0}, r"num_beams must be an integer >= 1, got 0"),
    ({"batch_size": "8"}, r"batch_size must be an integer"),
    ({"device": "tpu"}, r"device 'tpu' is unknown; choose one of \['auto', 'cpu', 'cuda'\]"),
])
def test_bad_options_are_refused(tiny_marian_dir, options, message):
    with pytest.raises(TranslatorError, match=message):
        HFMarianTranslator.check_options("es", "en", {"model_dir": str(tiny_marian_dir), **options})


def test_direction_is_the_models_own(tiny_marian_dir):
    with pytest.raises(TranslatorError, match=r"translates es-en \(tokenizer_config.json\), not en-es"):
        HFMarianTranslator.check_options("en", "es", {"model_dir": str(tiny_marian_dir)})


def test_device_auto_follows_torch(tiny_marian_dir):
    with HFMarianTranslator(model_dir=str(tiny_marian_dir)) as translator:
        assert translator.device == ("cuda" if torch.cuda.is_available() else "cpu")
        assert next(translator.model.parameters()).device.type == translator.device
    if not torch.cuda.is_available():
        with pytest.raises(TranslatorError, match=r"device 'cuda' was asked for but torch sees no GPU"):
            HFMarianTranslator(model_dir=str(tiny_marian_dir), device="cuda")


def test_output_lengths_stop_at_the_first_end_token():
    tokens = torch.tensor([[5, 7, 0, 9, 9], [5, 6, 7, 8, 4], [3, 0, 9, 9, 9]])
    assert output_lengths(tokens, 0, 9) == [3, 5, 2]
