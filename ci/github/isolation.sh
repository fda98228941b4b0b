# shellcheck shell=bash
# Sourced by install.sh and review.sh before they start any program: the rules that keep the
# repository under review (the checkout a CI job works in) from supplying a program. Its files
# are the pull request's: a `git`, `python3` or `bash` there runs with the job's tokens if PATH
# leads to it. Only builtins run here, until redline_write_launcher.

# The checkouts, each as spelled and as resolved (links followed): set by redline_checkouts.
redline_checkout_dirs=()

# redline_checkouts DIR...: name the checkouts (the review step's working directory,
# GITHUB_WORKSPACE, CI_PROJECT_DIR); empty and relative names are ignored.
redline_checkouts() {
  local dir
  redline_checkout_dirs=()
  for dir in "$@"; do
    [[ "$dir" == /* ]] || continue
    redline_checkout_dirs+=("${dir%/}" "$(redline_resolved "$dir")")
  done
}

# redline_resolved PATH: PATH (absolute) with links followed, as far as it exists (the rest of
# it appended as spelled: a directory about to be created is where its parent leads).
redline_resolved() {
  local head=${1%/} tail="" real
  while [[ -n "$head" && ! -d "$head" ]]; do
    tail=/${head##*/}$tail
    head=${head%/*}
  done
  real=$(cd -- "${head:-/}" 2>/dev/null && pwd -P) || real=$head
  printf '%s' "${real%/}$tail"
}

# redline_inside_checkout PATH: true when PATH (absolute) is a checkout or inside one, as
# spelled or once resolved.
redline_inside_checkout() {
  local dir spelling
  local -a spellings=("${1%/}" "$(redline_resolved "$1")")
  for dir in ${redline_checkout_dirs[@]+"${redline_checkout_dirs[@]}"}; do
    for spelling in "${spellings[@]}"; do
      if [[ "$spelling/" == "$dir/"* ]]; then
        return 0
      fi
    done
  done
  return 1
}

# PATH as the scripts use it: only absolute directories that exist and lie outside every
# checkout. A relative entry ("", ".", "bin") is looked up in the working directory, which is
# the checkout in a review step; a checkout's directory holds the pull request's programs.
redline_trusted_path() {
  local entry kept=""
  local -a entries=()
  IFS=: read -r -a entries <<<"$PATH"
  for entry in ${entries[@]+"${entries[@]}"}; do
    [[ "$entry" == /* && -d "$entry" ]] || continue
    redline_inside_checkout "$entry" && continue
    kept+=${kept:+:}$entry
  done
  printf '%s' "$kept"
}

# Write `dest`: a /bin/sh launcher that starts `python` isolated (-I: neither the working
# directory nor PYTHON* variables nor the user's site-packages reach it) on the console script
# `script`. A review runs in the checkout, so nothing there may be importable.
redline_write_launcher() {
  local python=$1 script=$2 dest=$3
  mkdir -p -- "${dest%/*}"
  {
    printf '#!/bin/sh\n'
    printf "# Redline, isolated from the working directory (written by Redline's install.sh).\n"
    printf 'exec %s -I %s "$@"\n' "$(redline_sh_quote "$python")" "$(redline_sh_quote "$script")"
  } >"$dest"
  chmod 755 -- "$dest"
}

# `value` as one single-quoted /bin/sh word.
redline_sh_quote() {
  local quote="'" escaped="'\\''"
  printf "'%s'" "${1//"$quote"/"$escaped"}"
}
