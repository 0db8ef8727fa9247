"""The BilDRL training module's two dictionary losses on the tiny space, without Ray: each trains, and the softmax
loss ranks a definition's word among its language's words the way retrieval then does."""

from __future__ import annotations

import pytest
import torch

from parabit.recipes.bildrl.config import BilDRLConfig, DictionaryModelConfig
from parabit.recipes.bildrl.model import BilDRLModule
from parabit.evaluation.retrieval import gold_ranks, retrieval_scores
from parabit.evaluation.metrics import unit_rows
from parabit.objectives import DictionaryL2Loss, DictionarySoftmaxLoss
from parabit.training import Step

from .conftest import MUSE_PAIRS

DEFINITIONS = ["a domesticated carnivorous mammal", "a small feline animal", "a building for living in",
               "a tall perennial woody plant", "a financial institution", "a wheeled motor vehicle"]


def _module(space, loss: str) -> BilDRLModule:
    config = BilDRLConfig(name="bildrl-module", directions=("es-en",), data_dir="unused", space="unused",
                          model=DictionaryModelConfig(encoder="bow", hidden=16, max_tokens=8), loss=loss,
                          temperature=0.1)
    ranges = {"en": space.language_range("en"), "foreign": space.language_range("es")}
    return BilDRLModule(config, torch.from_numpy(space.vectors), ranges)


@pytest.mark.parametrize("loss, objective", [("l2", DictionaryL2Loss), ("softmax", DictionarySoftmaxLoss)])
def test_each_dictionary_loss_trains_and_ranks_the_seen_words_higher(tiny_spaces, loss, objective):
    space = tiny_spaces["es"]
    spanish = [es for es, _ in MUSE_PAIRS][:len(DEFINITIONS)]
    ids, lengths = space.token_ids(DEFINITIONS, "en", 8)
    words = space.words("es")
    batch = {"ids_a": torch.from_numpy(ids), "len_a": torch.from_numpy(lengths),
             "ids_b": torch.tensor([[words[w]] for w in spanish])}
    torch.manual_seed(0)
    module = _module(space, loss)
    assert isinstance(module.dictionary, objective)
    step = Step(torch.Generator().manual_seed(0), {}, 1, 1)
    low, high = space.language_range("es")

    def mrr() -> float:
        with torch.no_grad():
            encoded = module.model(batch["ids_a"], batch["len_a"]).numpy()
        table = module.model.word_vectors().detach().numpy()[low:high]
        gold = (batch["ids_b"][:, 0] - low).numpy()
        return retrieval_scores(gold_ranks(unit_rows(encoded), unit_rows(table), gold))["mrr"]

    optimizer = torch.optim.Adam(module.parameters(), lr=1e-2)
    before_mrr, losses = mrr(), []
    for _ in range(60):
        optimizer.zero_grad()
        value, parts = module(batch, step)
        value.backward()
        optimizer.step()
        losses.append(value.item())
    assert losses[-1] < 0.5 * losses[0] and parts["dictionary_loss"] == pytest.approx(losses[-1])
    assert mrr() > before_mrr + 0.2, (before_mrr, mrr())
