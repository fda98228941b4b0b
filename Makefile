# Redline — two commands are the contract with a new user:
#   make run   set everything up and review a built-in demo change (offline, no API key)
#   make test  set everything up and run every check and test
# Everything is installed by these rules, into .venv, from the hash-pinned uv.lock.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
UV     := $(BIN)/uv
# Bytecode is compiled at install (UV_COMPILE_BYTECODE): Python only reads .pyc files, it does not
# write them where PYTHONDONTWRITEBYTECODE is set (as on some CI machines and containers), and
# without them every `redline` start-up compiles its imports again (0.31 s cold vs 0.18 s).
UV_ENV := UV_PROJECT_ENVIRONMENT=$(VENV) UV_PYTHON=$(BIN)/python UV_NO_PROGRESS=1 \
	UV_COMPILE_BYTECODE=1

.PHONY: run test lint typecheck pytest test-deps nvim node emacs kate bench bench-memory setup setup-dev clean vsix \
	client-check test-pythons mutation

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(UV): | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==0.13.9

# Runtime dependencies only, exactly as locked (--frozen: the lock is never rewritten here).
# Redline itself is installed editable, which uv does not compile: compileall does (a .pyc
# older than its source is ignored, so an edit is never shadowed). The Makefile is a
# prerequisite so that a change to how the environment is built reaches existing ones.
$(VENV)/.runtime-stamp: uv.lock pyproject.toml Makefile | $(UV)
	$(UV_ENV) $(UV) sync --frozen --no-dev --inexact --quiet
	$(BIN)/python -m compileall -q server/redline
	touch $@

$(VENV)/.dev-stamp: uv.lock pyproject.toml Makefile | $(UV)
	$(UV_ENV) $(UV) sync --frozen --quiet
	$(BIN)/python -m compileall -q server/redline
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

# On PYTEST_WORKERS pytest-xdist workers (the machines this runs on have 2 cores, and most tests
# wait on subprocesses: git, the CLI, editors, servers); tests of one xdist_group share a worker.
# PYTEST_WORKERS=0 runs them in this process, one after another.
PYTEST_WORKERS ?= 2
pytest: setup-dev test-deps
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist loadgroup

# The real LSP clients the tests drive (tests/test_neovim.py, tests/test_emacs.py,
# tests/test_vscode_jsonrpc.py): Debian's Neovim, Emacs with eglot, and vscode-jsonrpc pinned in
# tests/node/package-lock.json. `make run` needs none of them. A missing Debian package is installed when running as root, else the rule says how.
NODE_DIR := tests/node
APT_INSTALL := apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -qq --no-install-recommends

test-deps: nvim emacs kate $(NODE_DIR)/node_modules/.install-stamp

nvim:
	@command -v nvim >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Neovim (Debian package neovim) for tests/test_neovim.py"; \
	    $(APT_INSTALL) neovim; \
	  else \
	    echo "tests/test_neovim.py needs Neovim >= 0.7: sudo apt-get install neovim" >&2; \
	    exit 1; \
	  fi; }

node: nvim  # after nvim: two apt-get runs must not overlap under make -j
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Node.js (Debian packages nodejs npm) for tests/test_vscode_jsonrpc.py"; \
	    $(APT_INSTALL) nodejs npm; \
	  else \
	    echo "tests/test_vscode_jsonrpc.py needs Node.js >= 18 and npm: sudo apt-get install" \
	      "nodejs npm" >&2; \
	    exit 1; \
	  fi; }

# Kate 22.12 under a virtual display (xvfb), driven by xdotool: tests/test_kate.py starts it with
# the README's Kate configuration (161 packages, ~35 MB, about a minute to install).
kate: emacs  # after emacs: two apt-get runs must not overlap under make -j
	@command -v kate >/dev/null 2>&1 && command -v Xvfb >/dev/null 2>&1 && \
	  command -v xdotool >/dev/null 2>&1 && command -v dbus-run-session >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Kate, Xvfb and xdotool (Debian packages kate xvfb xdotool dbus) for tests/test_kate.py"; \
	    $(APT_INSTALL) kate xvfb xdotool dbus; \
	  else \
	    echo "tests/test_kate.py needs Kate, Xvfb and xdotool: sudo apt-get install kate xvfb" \
	      "xdotool dbus" >&2; \
	    exit 1; \
	  fi; }

# Emacs without X (emacs-nox) and eglot: bundled from Emacs 29, Debian's elpa-eglot (1.9) before.
# The README's Emacs snippet is what tests/test_emacs.py loads.
EMACS_HAS_EGLOT := emacs --batch --eval "(require 'eglot)" >/dev/null 2>&1

emacs: node  # after node: two apt-get runs must not overlap under make -j
	@command -v emacs >/dev/null 2>&1 && $(EMACS_HAS_EGLOT) || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    packages="elpa-eglot"; command -v emacs >/dev/null 2>&1 || packages="emacs-nox elpa-eglot"; \
	    echo "installing Emacs and eglot (Debian packages $$packages) for tests/test_emacs.py"; \
	    $(APT_INSTALL) $$packages; \
	  else \
	    echo "tests/test_emacs.py needs Emacs >= 28 with eglot: sudo apt-get install" \
	      "emacs-nox elpa-eglot" >&2; \
	    exit 1; \
	  fi; }

$(NODE_DIR)/node_modules/.install-stamp: $(NODE_DIR)/package.json $(NODE_DIR)/package-lock.json | node
	npm ci --prefix $(NODE_DIR) --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

test: lint typecheck pytest client-check e2e

# The Python tests on every supported interpreter the machine has (not part of `make test`: a
# full run per version takes minutes). Each version gets its own environment, .venvs/pyX.Y,
# synced from the same uv.lock. TEST_PYTHONS lists interpreters; by default pyenv's 3.11, 3.12
# and 3.13, else python3.X on PATH. Versions not found are named, not silently skipped.
PYENV_ROOT_DIR := $(shell pyenv root 2>/dev/null)
SUPPORTED_PYTHONS := 3.11 3.12 3.13
find_python = $(firstword $(wildcard $(PYENV_ROOT_DIR)/versions/$(1).*/bin/python) \
	$(shell command -v python$(1) 2>/dev/null))
TEST_PYTHONS ?= $(foreach v,$(SUPPORTED_PYTHONS),$(call find_python,$(v)))

test-pythons: test-deps | $(UV)
	@results=""; failed=0; \
	for v in $(SUPPORTED_PYTHONS); do \
	  case " $(TEST_PYTHONS) " in *"/$$v."*|*"python$$v "*) ;; \
	    *) results="$$results\n  Python $$v: not tested (not in TEST_PYTHONS)";; esac; \
	done; \
	for py in $(TEST_PYTHONS); do \
	  v=$$($$py -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])'); \
	  env=.venvs/py$$v; \
	  echo "== Python $$v ($$py) in $$env"; \
	  UV_PROJECT_ENVIRONMENT=$$env UV_PYTHON=$$py UV_NO_PROGRESS=1 UV_COMPILE_BYTECODE=1 \
	    $(UV) sync --frozen --quiet || { failed=1; results="$$results\n  Python $$v: install failed"; continue; }; \
	  if $$env/bin/pytest -q -n $(PYTEST_WORKERS) --dist loadgroup; then results="$$results\n  Python $$v: passed"; \
	  else failed=1; results="$$results\n  Python $$v: FAILED"; fi; \
	done; \
	printf "test-pythons:$$results\n"; exit $$failed

# Mutation testing of the guard modules, each against its own tests (scripts/mutation.toml), with
# mutmut; prints a table per module and the surviving mutants. Not part of `make test`: a module
# takes minutes. MODULES narrows it to modules or directories, SAMPLE tests that many mutants per
# module, drawn at random (an estimate, for a big module on a busy machine):
#   make mutation MODULES=server/redline/git/hardening.py
#   make mutation MODULES=server/redline/redaction/ SAMPLE=60
MODULES ?=
SAMPLE ?=
mutation: setup-dev
	$(BIN)/python scripts/mutation.py $(MODULES) $(if $(SAMPLE),--sample $(SAMPLE))

# The VS Code extension: client-check, vsix.
include editor-client/client.mk

bench: setup-dev
	$(BIN)/python benchmarks/pipeline_overhead.py
	$(BIN)/python benchmarks/run_all.py

# Project memory (issue 27): retrieval quality on real history and what memory costs. Not in
# `bench`: each builds an index of real repositories (the embedding model over every symbol),
# tens of minutes on a loaded 2-core machine.
bench-memory: setup-dev
	$(BIN)/python benchmarks/memory_retrieval.py
	$(BIN)/python benchmarks/memory_costs.py

# The VS Code extension's end-to-end test in a real VS Code: e2e, e2e-screenshot.
include editor-client/e2e/e2e.mk

clean:
	rm -rf $(VENV) .venvs .mypy_cache .pytest_cache .ruff_cache .mutation $(NODE_DIR)/node_modules \
	  editor-client/node_modules editor-client/dist editor-client/out editor-client/*.vsix
