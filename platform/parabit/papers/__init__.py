"""The seed papers, each a package of its own (its plan of cells, tables and findings; its published numbers; its
analyses), on the vocabulary every plan is written in: :mod:`~parabit.papers.plan` (what a paper declares),
:mod:`~parabit.papers.cells` (a cell = paper, group, seed, training config; a paper's results by group and seed),
:mod:`~parabit.papers.metrics` (how a number is read from a run), :mod:`~parabit.papers.findings` (a comparison of two
groups and its verdict), :mod:`~parabit.papers.tables` (the paper's numbers beside ours) and
:mod:`~parabit.papers.records` (what a finished cell or data step records, keyed by its digest). Running them (finding
or training cells, the committed ledger of records) and writing the document is :mod:`parabit.reproduction`, above
this package.
"""
