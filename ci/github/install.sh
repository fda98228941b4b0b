#!/usr/bin/env bash
# Install Redline for the GitHub Action (action.yml) and the GitLab example (docs/ci) from a
# checkout of Redline, which is the version the workflow pinned (`uses: OWNER/redline@TAG` or
# @SHA): uv at the Makefile's version, hash-checked, then the runtime dependencies exactly as
# uv.lock pins them (with hashes). Nothing is installed into the job's Python or the repository
# under review.
#
# Nothing this runs comes from the repository under review, whose checkout (GITHUB_WORKSPACE,
# CI_PROJECT_DIR) is often the working directory it is started in:
# - programs come from a PATH without relative entries and without the checkout's directories;
# - every step runs in TOOLS_DIR, which must be outside the checkout;
# - Python runs isolated (-I: no working directory on sys.path, no PYTHON* variables, no user
#   site-packages), and the job's PYTHON* variables are not passed on to the Pythons uv starts
#   (the build backend, the bytecode compiler);
# - uv reads no configuration file (--no-config), none of the job's UV_* settings that could
#   name one, and is told the project (--project) and the interpreter (--python), so no uv.toml,
#   [tool.uv] or .python-version is looked for;
# - the interpreter is resolved once, outside the checkout, and used by path from then on;
# - the installed `redline` is a launcher that starts Redline's Python with -I on the console
#   script: the review runs in the checkout, so nothing there may be importable.
#
# Environment:
#   PYTHON        the interpreter to build the environments with (3.11 to 3.13): a path, or a
#                 command name looked up on PATH (outside the checkout)
#   ACTION_PATH   the Redline checkout ($GITHUB_ACTION_PATH): pyproject.toml and uv.lock
#   TOOLS_DIR     where the environments go, outside the checkout (a directory under $RUNNER_TEMP)
#   GITHUB_OUTPUT if set, gets redline=<path of the installed redline command>
#
# Exit code: 0 installed, 2 an invalid input, else the failing step's.
set -euo pipefail
unset CDPATH

fail() {
  echo "redline install: $1" >&2
  exit 2
}

[[ -n "${PYTHON:-}" ]] || fail "PYTHON must name a Python interpreter"
[[ -n "${ACTION_PATH:-}" ]] || fail "ACTION_PATH must be the Redline checkout"
[[ -n "${TOOLS_DIR:-}" ]] || fail "TOOLS_DIR must name a directory for the environments"
[[ "$ACTION_PATH" == /* ]] || fail "ACTION_PATH must be an absolute path, not '$ACTION_PATH'"
[[ "$TOOLS_DIR" == /* ]] || fail "TOOLS_DIR must be an absolute path, not '$TOOLS_DIR'"

# shellcheck source=isolation.sh source-path=SCRIPTDIR
source "$ACTION_PATH/ci/github/isolation.sh"
redline_checkouts "${GITHUB_WORKSPACE:-}" "${CI_PROJECT_DIR:-}"
PATH=$(redline_trusted_path)
export PATH
if redline_inside_checkout "$TOOLS_DIR"; then
  fail "TOOLS_DIR must be outside the checkout, not '$TOOLS_DIR'"
fi

# Out of the checkout before the first program starts. The interpreter is resolved once, here:
# a pyenv shim picks a version by the working directory's .python-version.
cd /
python=$(command -v -- "$PYTHON") || fail "PYTHON ($PYTHON) is not a command"
python=$("$python" -I -c 'import sys; print(sys.executable)')
[[ "$python" == /* ]] || fail "PYTHON ($PYTHON) does not know its own path"
mkdir -p -- "$TOOLS_DIR"
cd -- "$TOOLS_DIR"

# The job's settings for Python and uv are its own steps', and may name files in the checkout
# (UV_CONFIG_FILE=uv.toml, UV_CACHE_DIR=.uv-cache, UV_FIND_LINKS, PYTHONPATH=.): the Pythons uv
# starts get no PYTHON* variable (nor PYTHON, resolved by then), and uv keeps only what tunes its downloads, and a cache
# directory outside the checkout. (pip keeps the job's PIP_* settings: it installs one wheel
# whose hash is pinned, so no setting can make it install anything else.)
while IFS= read -r name; do
  case $name in
    PYTHON*) unset "$name" ;;
    UV_OFFLINE | UV_NATIVE_TLS | UV_HTTP_TIMEOUT | UV_HTTP_RETRIES | UV_CONCURRENT_DOWNLOADS | \
      UV_CONCURRENT_BUILDS | UV_CONCURRENT_INSTALLS) ;;
    UV_CACHE_DIR)
      if [[ "$UV_CACHE_DIR" != /* ]] || redline_inside_checkout "$UV_CACHE_DIR"; then
        echo "redline install: not using UV_CACHE_DIR=$UV_CACHE_DIR (not outside the checkout)" >&2
        unset UV_CACHE_DIR
      fi
      ;;
    UV_*) unset "$name" ;;
  esac
done < <(compgen -e)

uv_env="$TOOLS_DIR/uv"
venv="$TOOLS_DIR/venv"

"$python" -I -m venv --clear "$uv_env"
"$uv_env/bin/python" -I -m pip install --quiet --disable-pip-version-check --require-hashes \
  -r "$ACTION_PATH/ci/github/uv-requirements.txt"

# --frozen: the lock is used as it is, never re-resolved; --no-dev: runtime dependencies only;
# --no-editable: Redline itself is copied into the environment, not linked to its checkout.
rm -rf -- "$venv"
UV_PROJECT_ENVIRONMENT="$venv" UV_NO_PROGRESS=1 UV_COMPILE_BYTECODE=1 \
  "$uv_env/bin/uv" sync --frozen --no-dev --no-editable --no-config \
  --python "$python" --project "$ACTION_PATH"

redline="$TOOLS_DIR/bin/redline"
redline_write_launcher "$venv/bin/python" "$venv/bin/redline" "$redline"
"$redline" --version
if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
  echo "redline=$redline" >>"$GITHUB_OUTPUT"
fi
