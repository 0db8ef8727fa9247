# The README's two commands. Both set everything up first (idempotent; fast the second time).
.PHONY: setup main test

setup:
	@bash scripts/setup.sh

main: setup
	.venv/bin/python jobs/main.py

test: setup
	.venv/bin/python -m pytest
