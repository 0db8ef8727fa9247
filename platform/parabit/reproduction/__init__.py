"""Reproducing the seed papers at full shipped scale: every table cell a resumable MLflow run, every headline
finding a verdict over several training seeds, and the reproduction document written from the runs.

This package runs the papers of :mod:`parabit.papers` and sits above them: :mod:`~parabit.reproduction.config`
(what ``parabit reproduce`` runs, one section per paper), :mod:`~parabit.reproduction.plans` (the registry of the
papers' plans), :mod:`~parabit.reproduction.reproduce` (preparing each paper, running its cells, recording them in
the ledger), :mod:`~parabit.reproduction.figures` and :mod:`~parabit.reproduction.document` (what a person reads).
"""
