#!/usr/bin/env bash
# Install Redline for the GitHub Action (action.yml) from the action's own checkout, which is the
# version the workflow pinned (`uses: OWNER/redline@TAG` or @SHA): uv at the Makefile's version,
# hash-checked, then the runtime dependencies exactly as uv.lock pins them (with hashes).
# Nothing is installed into the job's Python or the repository under review.
#
# Environment:
#   PYTHON        the interpreter to build the environments with (3.11 to 3.13)
#   ACTION_PATH   the action's checkout ($GITHUB_ACTION_PATH): pyproject.toml and uv.lock
#   TOOLS_DIR     where the environments go (a directory under $RUNNER_TEMP)
#   GITHUB_OUTPUT if set, gets redline=<path of the installed redline command>
set -euo pipefail

: "${PYTHON:?PYTHON must name a Python interpreter}"
: "${ACTION_PATH:?ACTION_PATH must be the action checkout}"
: "${TOOLS_DIR:?TOOLS_DIR must name a directory for the environments}"

uv_env="$TOOLS_DIR/uv"
venv="$TOOLS_DIR/venv"

"$PYTHON" -m venv "$uv_env"
"$uv_env/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes \
  -r "$ACTION_PATH/ci/github/uv-requirements.txt"

# --frozen: the lock is used as it is, never re-resolved; --no-dev: runtime dependencies only;
# --no-editable: Redline itself is copied into the environment, not linked to the checkout.
UV_PROJECT_ENVIRONMENT="$venv" UV_PYTHON="$PYTHON" UV_NO_PROGRESS=1 UV_COMPILE_BYTECODE=1 \
  "$uv_env/bin/uv" sync --frozen --no-dev --no-editable --project "$ACTION_PATH"

"$venv/bin/redline" --version
if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
  echo "redline=$venv/bin/redline" >>"$GITHUB_OUTPUT"
fi
