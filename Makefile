# Redline — two commands are the contract with a new user:
#   make run   set everything up and review a built-in demo change (offline, no API key)
#   make test  set everything up and run every check and test
# Everything is installed by these rules, into .venv, from the hash-pinned uv.lock.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
UV     := $(BIN)/uv
UV_ENV := UV_PROJECT_ENVIRONMENT=$(VENV) UV_PYTHON=$(BIN)/python UV_NO_PROGRESS=1

.PHONY: run test lint typecheck pytest bench setup setup-dev clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(UV): | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==0.13.9

# Runtime dependencies only, exactly as locked (--frozen: the lock is never rewritten here).
$(VENV)/.runtime-stamp: uv.lock pyproject.toml | $(UV)
	$(UV_ENV) $(UV) sync --frozen --no-dev --inexact --quiet
	touch $@

$(VENV)/.dev-stamp: uv.lock pyproject.toml | $(UV)
	$(UV_ENV) $(UV) sync --frozen --quiet
	touch $@ $(VENV)/.runtime-stamp

setup: $(VENV)/.runtime-stamp
setup-dev: $(VENV)/.dev-stamp

run: setup
	$(BIN)/python scripts/demo.py

lint: setup-dev
	$(BIN)/ruff check server tests benchmarks scripts
	$(BIN)/ruff format --check server tests benchmarks scripts

typecheck: setup-dev
	$(BIN)/mypy

pytest: setup-dev
	$(BIN)/pytest -q

test: lint typecheck pytest

bench: setup-dev
	$(BIN)/python benchmarks/pipeline_overhead.py
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
