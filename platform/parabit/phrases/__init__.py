"""Bilingual phrase pairs and pivot paraphrases from word-aligned bitext (Elgohary & Carpuat 2017's training data).

bitext → ingest (:mod:`parabit.backtranslation.ingest`) → word alignment with eflomal, sharded on Ray Data
(:mod:`parabit.phrases.align`) → Moses-style phrase extraction (:mod:`parabit.phrases.extract`) with counts merged by
a Ray Data groupby and p(e|f), p(f|e) (:mod:`parabit.phrases.table`) → pivot paraphrases
(:mod:`parabit.phrases.pivot`). The stages are in :mod:`parabit.phrases.stages`; ``pipelines/phrases.py`` strings
them together and ``jobs/phrases.py`` runs it.
"""

from parabit.phrases.config import AlignConfig, PhrasesConfig, PhraseTableConfig, PivotConfig

__all__ = ["AlignConfig", "PhraseTableConfig", "PhrasesConfig", "PivotConfig"]
