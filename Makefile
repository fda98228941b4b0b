# Redline — two commands are the contract with a new user:
#   make run   set everything up and review a built-in demo change (offline, no API key)
#   make test  set everything up and run every check and test
# Everything is installed by these rules, into .venv, from the hash-pinned uv.lock.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
UV     := $(BIN)/uv
UV_ENV := UV_PROJECT_ENVIRONMENT=$(VENV) UV_PYTHON=$(BIN)/python UV_NO_PROGRESS=1

.PHONY: run test lint typecheck pytest test-deps nvim node bench setup setup-dev clean vsix client-check

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

pytest: setup-dev test-deps
	$(BIN)/pytest -q

# The real LSP clients the tests drive (tests/test_neovim.py, tests/test_vscode_jsonrpc.py):
# Debian's Neovim, and vscode-jsonrpc pinned in tests/node/package-lock.json. `make run` needs
# neither. A missing Debian package is installed when running as root, else the rule says how.
NODE_DIR := tests/node
APT_INSTALL := apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -qq --no-install-recommends

test-deps: nvim $(NODE_DIR)/node_modules/.install-stamp

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

$(NODE_DIR)/node_modules/.install-stamp: $(NODE_DIR)/package.json $(NODE_DIR)/package-lock.json | node
	npm ci --prefix $(NODE_DIR) --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

test: lint typecheck pytest client-check e2e

# The VS Code extension: client-check, vsix.
include editor-client/client.mk

bench: setup-dev
	$(BIN)/python benchmarks/pipeline_overhead.py
	$(BIN)/python benchmarks/run_all.py

# The VS Code extension's end-to-end test in a real VS Code: e2e, e2e-screenshot.
include editor-client/e2e/e2e.mk

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache $(NODE_DIR)/node_modules \
	  editor-client/node_modules editor-client/dist editor-client/out editor-client/*.vsix
