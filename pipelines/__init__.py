"""parabit's named pipelines, assembled from the library's stages, and the commands that run them.

``backtranslate`` (ingest → back-translate → score → select → stats) and ``phrases`` (ingest → align →
phrase table → pivot paraphrases) each expose ``run(config)``. :mod:`pipelines.commands` defines the commands that
run pipelines (``backtranslate``, ``phrases``, ``main``, ``reproduce``); the project registers them with the
``parabit`` command through the ``parabit.commands`` entry points. Dependencies point one way: this package imports
the library (``parabit``), never the reverse.
"""
