"""The trainable pair model and its optimisers: one encoder, both languages in one word table."""

from __future__ import annotations

import torch
from torch import nn

from parabit.embedder import SentenceEmbedder
from parabit.encoders import SentenceEncoder, touched_rows
from parabit.objectives.bilingual_hinge import BilingualHingeLoss
from parabit.objectives.paraphrase_margin import ParaphraseMarginLoss
from parabit.objectives.regularization import L2Regularizer, L2ToInitRegularizer
from parabit.text.glove import glove_rows_for
from parabit.text.vocab import Vocabulary
from parabit.training.config import ModelConfig, ObjectiveConfig, OptimConfig
from parabit.training.row_sparse_adam import RowSparseAdam


class PairModel(nn.Module):
    """Encodes both sides of a pair batch in one forward call (one call per step, as DDP requires)."""

    def __init__(self, encoder: SentenceEncoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, ids_a, len_a, ids_b, len_b):
        return self.encoder(ids_a, len_a), self.encoder(ids_b, len_b)


def encoder_spec(config: ModelConfig, vocab_size: int) -> dict:
    """What :meth:`SentenceEmbedder.build_encoder` needs to rebuild this encoder at inference."""
    return {"encoder": config.encoder, "vocab_size": vocab_size, "dim": config.dim, "options": dict(config.options)}


def initial_word_table(config: ModelConfig, vocab: Vocabulary) -> torch.Tensor:
    """Initial word vectors: N(0, init_std²) (seeded by the caller's torch seed), GloVe rows for English if asked."""
    table = torch.randn(len(vocab), config.dim) * config.init_std
    if config.init == "glove":
        glove, _ = glove_rows_for(vocab, "en", std=config.init_std)
        table = torch.from_numpy(glove)
    return table


def build_encoder(config: ModelConfig, vocab: Vocabulary, sparse: bool) -> tuple[SentenceEncoder, dict]:
    """The encoder of ``config`` over ``vocab`` with its initial word table, and its spec."""
    spec = encoder_spec(config, len(vocab))
    initial = initial_word_table(config, vocab)
    return SentenceEmbedder.build_encoder(spec, sparse=sparse, initial_vectors=initial), spec


class PairObjective(nn.Module):
    """J_bi or J_pa on a pair batch, plus the configured regulariser on the word-table rows the batch used."""

    def __init__(self, config: ObjectiveConfig, initial_table: torch.Tensor | None = None):
        """``initial_table``: the word table before training, needed (only) by the ``l2_to_init`` regulariser."""
        super().__init__()
        self.config = config
        if config.name == "jbi":
            self.loss = BilingualHingeLoss(margin=config.margin, distance=config.distance)
        else:
            self.loss = ParaphraseMarginLoss(margin=config.margin, strategy=config.sampling)
        self.regularizer = None
        if config.regularization > 0:
            self.regularizer = (L2Regularizer(config.regularization) if config.regularization_kind == "l2"
                                else L2ToInitRegularizer(config.regularization, initial_table))

    def forward(self, g1, g2, batch, word_table: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        if self.config.name == "jbi":
            loss = self.loss.in_batch(g1, g2, self.config.negatives, generator)
        else:
            loss = self.loss.in_batch(g1, g2, generator=generator)
        if self.regularizer is not None:
            rows = torch.unique(torch.cat([touched_rows(batch["ids_a"], batch["len_a"]),
                                           touched_rows(batch["ids_b"], batch["len_b"])]))
            loss = loss + self.regularizer(word_table, rows)
        return loss


def build_optimizers(model: nn.Module, config: OptimConfig) -> list[torch.optim.Optimizer]:
    """Sparse-gradient parameters get the sparse-aware variant of ``config.name``; the rest the dense one."""
    sparse_params, dense_params = [], []
    for module in model.modules():
        if isinstance(module, nn.Embedding) and module.sparse:
            sparse_params.append(module.weight)
    sparse_ids = {id(p) for p in sparse_params}
    dense_params = [p for p in model.parameters() if id(p) not in sparse_ids and p.requires_grad]
    optimizers: list[torch.optim.Optimizer] = []
    dense_class = {"adam": torch.optim.Adam, "adagrad": torch.optim.Adagrad, "sgd": torch.optim.SGD}[config.name]
    sparse_class = {"adam": RowSparseAdam, "adagrad": torch.optim.Adagrad, "sgd": torch.optim.SGD}[config.name]
    if sparse_params:
        optimizers.append(sparse_class(sparse_params, lr=config.lr))
    if dense_params:
        options = {"amsgrad": True} if config.amsgrad else {}
        optimizers.append(dense_class(dense_params, lr=config.lr, **options))
    return optimizers
