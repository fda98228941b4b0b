#!/usr/bin/env bash
# The review step of the GitHub Action (action.yml): review the pull request, write SARIF, and
# report the exit code. Inputs come through the environment only (never interpolated into a shell
# line by the workflow), and every value is passed to redline as one argument.
#
# Environment:
#   REDLINE       the redline command (default: redline on PATH)
#   PR_NUMBER     the pull request to review (redline review --pr N, through gh and GH_TOKEN)
#   REVIEW_SCOPE  instead of PR_NUMBER, the scope flags, split on spaces (e.g. "--branch main")
#   FAIL_ON       critical | high | medium | low (default high)
#   MODEL         a litellm model string; empty: the offline analyzers only
#   POST          true: also post the summary comment to the pull request (--post)
#   INLINE        true: also post inline review comments (--inline)
#   SARIF_FILE    where the SARIF report goes (default redline.sarif)
#   DEFER_EXIT    true: exit 0 after recording the exit code, so that a later step can upload
#                 the SARIF first and then fail with it (the action does this)
#   GITHUB_OUTPUT if set, gets exit-code=<code> and, when the report was written,
#                 sarif-file=<path>
#
# Exit code: redline's (0 ok, 1 a finding at or above FAIL_ON, 2 an error, 3 the model could not
# be used), or 2 for an invalid input; 0 whatever happened with DEFER_EXIT=true.
#
# It runs in the checkout of the repository under review, so programs come from a PATH without
# relative entries and without the checkout's directories (isolation.sh), and REDLINE is the
# launcher install.sh wrote, which starts Redline's Python isolated from the working directory.
set -euo pipefail
unset CDPATH

case ${BASH_SOURCE[0]} in
  */*) here=${BASH_SOURCE[0]%/*} ;;
  *) here=. ;;
esac
# shellcheck source=isolation.sh source-path=SCRIPTDIR
source "$here/isolation.sh"
redline_checkouts "$(pwd -P)" "${GITHUB_WORKSPACE:-}" "${CI_PROJECT_DIR:-}"
PATH=$(redline_trusted_path)
export PATH

output() {
  if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
    printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
  fi
}

finish() {
  local code=$1
  output exit-code "$code"
  if [[ "${DEFER_EXIT:-false}" == "true" ]]; then
    exit 0
  fi
  exit "$code"
}

fail_input() {
  echo "redline action: $1" >&2
  finish 2
}

is_bool() {
  [[ "$1" == "true" || "$1" == "false" ]]
}

redline=${REDLINE:-redline}
fail_on=${FAIL_ON:-high}
model=${MODEL:-}
post=${POST:-false}
inline=${INLINE:-false}
sarif=${SARIF_FILE:-redline.sarif}

case "$fail_on" in
  critical | high | medium | low) ;;
  *) fail_input "fail-on must be critical, high, medium or low, not '$fail_on'" ;;
esac
is_bool "$post" || fail_input "post must be true or false, not '$post'"
is_bool "$inline" || fail_input "inline must be true or false, not '$inline'"
[[ -n "$sarif" ]] || fail_input "sarif-file must not be empty"

if [[ -n "${REVIEW_SCOPE:-}" ]]; then
  read -r -a scope <<<"$REVIEW_SCOPE"
elif [[ "${PR_NUMBER:-}" =~ ^[1-9][0-9]*$ ]]; then
  scope=(--pr "$PR_NUMBER")
else
  fail_input "no pull request to review: run on a pull_request event (PR_NUMBER is '${PR_NUMBER:-}')"
fi

args=(review "${scope[@]}" --format sarif --output "$sarif" --fail-on "$fail_on")
if [[ -n "$model" ]]; then
  args+=(--model "$model")
fi
# inline comments are a kind of posting: inline=true posts even when post was left false.
if [[ "$post" == "true" || "$inline" == "true" ]]; then
  args+=(--post)
fi
if [[ "$inline" == "true" ]]; then
  args+=(--inline)
fi

rm -f -- "$sarif"
echo "redline ${args[*]}" >&2
code=0
"$redline" "${args[@]}" || code=$?

if [[ -s "$sarif" ]]; then
  output sarif-file "$sarif"
else
  echo "redline action: no SARIF report was written to $sarif (exit $code)" >&2
fi
finish "$code"
