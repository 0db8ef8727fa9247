"""Bilingual dictionary representations (BilDRL, Chen et al. 2019).

Encoders map a word's definition in one language onto the vector of the word in a bilingual embedding space:

* :mod:`~parabit.recipes.bildrl.space`: the target space (a parabit-trained bilingual word table), kNN over one language;
* :mod:`~parabit.recipes.bildrl.build`: the dictionaries (fr-en from WOLF + WordNet, en-es through Apertium, es-en from
  MUSE) with their held-out test words, and the bilingual paraphrase set, written once as parquet;
* :mod:`~parabit.recipes.bildrl.model`, :mod:`~parabit.recipes.bildrl.loop`, :mod:`~parabit.recipes.bildrl.trainer`: the
  definition encoder and its Ray Train run (single direction, multi-task, joint);
* :mod:`~parabit.evaluation.retrieval`, :mod:`~parabit.evaluation.paraphrase`: the paper's two evaluations.

A direction is named ``<word language>-<definition language>``: ``fr-en`` holds French words defined in English.
"""
