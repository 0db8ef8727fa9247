"""parabit: sentence embeddings from bilingual supervision, on Ray and MLflow.

The library lives in ``platform/parabit`` and is imported as ``parabit``. User entry points are in
``jobs/``; data pipelines in ``pipelines/``; Tune search spaces in ``tuning/``.
"""

__version__ = "0.1.0"
