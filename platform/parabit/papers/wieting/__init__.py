"""Wieting, Mallinson & Gimpel (2017), "Learning Paraphrastic Sentence Embeddings from Back-Translated Bitext", on
the shipped data: back-translated pairs selected by each filter alone at one equal size (thresholds tuned on the dev
set with a Ray Tune sweep), length ranges, rule-based vs neural MT, back-translations vs bilingual pairs and PPDB,
AVG vs GRAN, and how MT output differs from human text.

Modules: :mod:`~parabit.papers.wieting.paper` (what the paper states), :mod:`~parabit.papers.wieting.settings` (what
the reproduction config sets), :mod:`~parabit.papers.wieting.facts` (what the data step records),
:mod:`~parabit.papers.wieting.data` (the data step: scoring, each variant's selection, the engine comparison),
:mod:`~parabit.papers.wieting.selection` (a variant = the filters it applies; its own selected-pairs folder),
:mod:`~parabit.papers.wieting.thresholds` (the threshold sweep), :mod:`~parabit.papers.wieting.groups` (the groups of
cells and their training configs), :mod:`~parabit.papers.wieting.report` (metrics, tables, setup and sections),
:mod:`~parabit.papers.wieting.findings` (findings and departures), :mod:`~parabit.papers.wieting.analyses` (MT vs
human text), :mod:`~parabit.papers.wieting.plan` (the plan that holds the data step's results and delegates).
"""
