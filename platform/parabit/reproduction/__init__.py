"""Reproducing the seed papers at full shipped scale: every table cell a resumable MLflow run, every headline
finding a verdict over several training seeds, and ``docs/reproduction.md`` written from the runs.

One concept per module: :mod:`~parabit.papers.cells` (a cell = paper, group, seed, training config; run
through the training kernel, skipped when its MLflow run is FINISHED), :mod:`~parabit.papers.metrics` (how a
number is read from a run), :mod:`~parabit.papers.findings` (a comparison of two groups and its verdict),
:mod:`~parabit.papers.tables` (the paper's numbers beside ours), :mod:`~parabit.papers.plan` (what a
paper declares), :mod:`~parabit.reproduction.plans` (the registry), :mod:`~parabit.reproduction.figures` and
:mod:`~parabit.reproduction.document` (what a person reads), :mod:`~parabit.reproduction.reproduce` (running it).
The papers' own modules declare their cells, tables and findings: :mod:`parabit.papers.bao.plan`,
:mod:`parabit.papers.elgohary.plan`, :mod:`parabit.papers.wieting.plan`, :mod:`parabit.papers.bildrl.plan`.
"""
