"""Exported models: the MLflow pyfunc embedding model and its registry entry."""
