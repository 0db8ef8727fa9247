# The README's two commands. Both set everything up first (idempotent; fast the second time).
.PHONY: setup main test serve champion

# `make serve`: a registered model over HTTP (POST /invocations), from the project's MLflow store or $MLFLOW_TRACKING_URI.
MODEL ?= models:/parabit-encoder@champion
PORT ?= 5001

setup:
	@bash scripts/setup.sh

main: setup
	.venv/bin/python jobs/main.py

test: setup
	.venv/bin/python -m pytest

# `make champion`: re-create models:/parabit-encoder@champion from scratch (data, training, evaluation, alias).
champion: setup
	.venv/bin/python jobs/champion.py

serve: setup
	.venv/bin/parabit serve --model-uri "$(MODEL)" --port "$(PORT)"
