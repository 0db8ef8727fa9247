"""Reproducing the seed papers at full shipped scale: every table cell a resumable MLflow run, every headline
finding a verdict over several training seeds, and the reproduction document written from the runs.

One concept per module: :mod:`~parabit.reproduction.cells` (a cell = paper, group, seed, training config; run
through the training kernel, skipped when its MLflow run is FINISHED), :mod:`~parabit.reproduction.metrics` (how a
number is read from a run), :mod:`~parabit.reproduction.findings` (a comparison of two groups and its verdict),
:mod:`~parabit.reproduction.tables` (the paper's numbers beside ours), :mod:`~parabit.reproduction.plan` (what a
paper declares), :mod:`~parabit.reproduction.plans` (the registry), :mod:`~parabit.reproduction.figures` and
:mod:`~parabit.reproduction.document` (what a person reads), :mod:`~parabit.reproduction.reproduce` (running it).
The papers' own modules declare their cells, tables and findings: :mod:`parabit.bao.plan`,
:mod:`parabit.elgohary.plan`, :mod:`parabit.wieting.plan`, :mod:`parabit.bildrl.plan`.
"""
