"""The bilingual model's judgement of a back-translation: does the English paraphrase mean what the foreign source
said? Scored in one English–foreign space (``parabit-encoder-bilingual``), at a static model's speed."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from parabit.embedder import SentenceEmbedder
from parabit.evaluation.bitext import ratio_margin, top_k, unit_tensor
from parabit.filters.base import Filter, FilterError, PairBatch, within

DEFAULT_MODEL = "models:/parabit-encoder-bilingual@champion"


@lru_cache(maxsize=2)
def bilingual_embedder(model: str) -> SentenceEmbedder:
    """The embedder of ``model`` (a model URI, a pyfunc model folder or an embedder folder), loaded once per
    process (each scoring worker loads it the first time it scores)."""
    from parabit.export.pyfunc import load_embedder  # MLflow's import only where a model is loaded

    return load_embedder(model)


class BilingualSimilarityFilter(Filter):
    """Scores the cosine (−1 to 1) of the bilingual ``model``'s vectors of the foreign source (``foreign``, read in
    its language, ``lang``) and of its English back-translation; with ``margin``, LASER's ratio margin instead
    (Artetxe & Schwenk 2019: that cosine over the mean cosine of each side with its ``k`` nearest candidates of the
    other side *within the scored batch*, so it depends on the batch's other pairs: keep ``score.batch_size`` large).
    Accepts within ``[minimum, maximum]``.

    It needs a bilingual model (recipe ``bilingual``); the default is ``models:/parabit-encoder-bilingual@champion``.
    A low minimum drops translations that lost the meaning (or sources that were not translations at all)."""

    name = "bilingual"
    needs_columns = ("foreign", "lang")

    def __init__(self, model: str = DEFAULT_MODEL, margin: bool = False, k: int = 4):
        if k < 1:
            raise FilterError(f"filter 'bilingual': k must be at least 1, got {k}")
        self.model, self.margin, self.k = model, margin, k

    def pinned_options(self) -> dict:
        """The model as the version its alias names now (one line if there is no such model)."""
        from parabit.tracking.registry import check_model_uri, pinned_model_uri

        return {"model": pinned_model_uri(check_model_uri(self.model))}

    def score(self, batch) -> np.ndarray:
        pairs = PairBatch.of(batch)
        if not pairs.has("foreign"):
            raise FilterError("filter 'bilingual' scores the foreign source against its translation: the batch has "
                              "no 'foreign' column")
        embedder = bilingual_embedder(self.model)
        langs = pairs.column("lang") if pairs.has("lang") else None
        foreign = embedder.encode(pairs.column("foreign"), lang=langs)
        english = embedder.encode(pairs.translation, lang="en")
        cosines = (unit_tensor(foreign) * unit_tensor(english)).sum(dim=1).numpy().astype(np.float64)
        if not self.margin:
            return cosines
        to_english = top_k(foreign, english, self.k)[0].mean(axis=1)
        to_foreign = top_k(english, foreign, self.k)[0].mean(axis=1)
        return ratio_margin(cosines, to_english, to_foreign).astype(np.float64)

    def accept(self, scores, *, minimum: float | None = None, maximum: float | None = None) -> np.ndarray:
        return within(scores, minimum, maximum)
