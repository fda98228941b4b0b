"""The commented configuration files `redline init` writes: the user file (every section) and
a repository's `.redline.toml` (only what config_repo.REPO_SETTINGS lets a repository set)."""

from __future__ import annotations

import os
from pathlib import Path

from redline.errors import ConfigError
from redline.nofollow import NoFollowError, replace_file

# `redline init` writes these. Every section the README's Configuration documents is here with
# its defaults, commented out; tests/test_config.py checks the file parses, loads as the
# defaults, and has every section the README shows.
_HEADER = """\
# Redline configuration.
# Layers, lowest to highest: the user file (~/.config/redline/config.toml, or $REDLINE_CONFIG),
# the repository's .redline.toml (or [tool.redline] in pyproject.toml: only excludes, ruff rules,
# a stricter gate or floor), REDLINE_* environment variables, flags. `redline config show`
# prints the merged result and where each value came from; `redline config validate` checks
# the files.
"""

_REVIEW = """
[review]
# Exit with code 1 when a finding at or above this severity is found (critical|high|medium|low).
# fail_on = "high"
# Hide findings below this severity (critical, high, medium, low, info).
# min_severity = "info"
# Files larger than this many bytes are listed as skipped, not reviewed.
# max_file_bytes = 1000000
# A review unit with more changed lines than this is tagged `large`.
# large_unit_lines = 400
# Extra glob patterns to skip (generated code, fixtures, ...).
# exclude = ["docs/generated/*"]
# Context (surrounding code) a model is shown per review unit, in tokens.
# context_tokens = 6000
# Reuse model answers for unchanged code (answers are cached by content).
# cache = true
"""

_ANALYZERS = """
[analyzers]
# ruff = true
# bandit = true
# ast-grep with Redline's rule pack: Go, Java, Rust, TypeScript/JavaScript and Python.
# ast_grep = true
# Files bandit runs on (ruff's S rules check every file): "beyond_ruff" (files whose added lines
# hold what bandit's checks that ruff lacks look for), "security_sensitive" (files with
# security-relevant changes) or "all" (every changed Python file, slowest).
# bandit_scope = "beyond_ruff"
# Native analyzers, each on the changed files of its kind (never the repository's own config
# for them): oxlint (JavaScript/TypeScript), shellcheck (shell scripts), hadolint
# (Dockerfiles), zizmor (GitHub Actions workflows and actions, offline).
# oxlint = true
# shellcheck = true
# hadolint = true
# zizmor = true
# Ruff rules to run (the reviewed repository's own ruff config is not used).
# ruff_select = ["F", "E9", "E722", "B", "S", "PLE", "RUF006", "UP031"]
# Seconds an analyzer may run.
# timeout = 120
"""

_CUSTOM = """
# Extra analyzers: any command that prints SARIF 2.1.0; "{files}" expands to the changed files.
# Only honoured from this user file, never from a repository file.
# [[analyzers.custom]]
# name = "eslint"
# command = ["npx", "eslint", "--format", "@microsoft/eslint-formatter-sarif", "{files}"]
# globs = ["*.js", "*.ts"]
"""

_USER_ONLY = """
[models]
# Where code is sent. Only read from this user file, the environment or flags; never from the
# reviewed repository. Any litellm model string: "gpt-4o-mini", "anthropic/claude-...",
# "ollama/qwen2.5-coder", or "openai/<name>" with api_base for an OpenAI-compatible server.
# Without a model, reviews run the static analyzers only.
# model = "ollama/qwen2.5-coder"
# api_base = "http://127.0.0.1:11434"
# Models tried in turn when the model fails.
# fallbacks = ["anthropic/claude-3-5-haiku-latest"]
# The key is better kept in the environment (REDLINE_API_KEY or the provider's own variable).

# A model per role (planner, reviewer, verifier, summarizer, ask, debater); unset fields fall
# back to [models].
# [models.roles.verifier]
# model = "gpt-4o"

[llm]
# Seconds per model request, and retries of a failed one.
# timeout = 120
# max_retries = 3
# Requests in flight at once; halved for the run on each 429, raised again as calls succeed.
# max_concurrency = 16
# A budget per run, in tokens or dollars; what was skipped is reported.
# budget_tokens = 400000
# budget_usd = 0.50
# temperature = 0.0
# Model requests per run, retries included (default: 2 × the planned calls + 20), and the
# bytes one request may carry (a larger one is not sent; its file is reported not reviewed).
# Like [tools], never read from a repository file.
# max_requests = 200
# max_request_bytes = 4194304

[tools]
# write_file (`redline ask`): at most this many reports, and this many bytes, per run.
# max_write_files = 20
# max_write_total_bytes = 10485760
# The git, gh and glab Redline runs (absolute paths). Unset: looked up on your PATH, skipping
# relative entries, the repository under review and directories others can write.
# git = "/usr/bin/git"
# gh = "/home/me/.local/bin/gh"
# glab = "/usr/local/bin/glab"

[debate]
# `redline debate`: rounds of turns, model calls per turn (tool steps included), and the
# transcript size beyond which older turns are summarized.
# rounds = 3
# turn_steps = 6
# turn_tokens = 1500
# transcript_tokens = 6000
# change_tokens = 12000
# Without [debate.reviewers], the built-in roles (security, performance, code-quality) debate
# with the `debater` role's model. A debate needs at least two reviewers.
# [debate.reviewers.security]
# model = "anthropic/claude-3-5-sonnet-latest"
# [debate.reviewers.perf]
# model = "ollama/qwen2.5-coder"
# api_base = "http://127.0.0.1:11434"
# prompt_file = "~/.config/redline/perf-debater.md"
# [debate.summarizer]
# model = "gpt-4o"

[store]
# Review records (`redline history`): the newest keep_records, none older than keep_days,
# whichever keeps fewer (0: no limit of that kind). A running review's record is never removed;
# `redline history --prune` applies this now.
# keep_records = 200
# keep_days = 30

[publish]
# `--post`: API writes (comments, reviews, edits) per run, at most; the summary comment lists
# the findings the cap kept from being posted inline. Never read from a repository file.
# max_writes = 50

[memory]
# Project memory (`redline memory build`): one private SQLite file per repository in Redline's
# cache, or a team's shared PostgreSQL with pgvector at `url` (shown without its password; the
# password may come from PGPASSWORD or ~/.pgpass instead). A store past a cap refuses more files
# and `redline memory status` says so. Never read from a repository file.
# url = "postgresql://redline@db.example:5432/redline"
# max_symbols = 200000
# max_index_mb = 1024
"""

# What a repository file may set (config_repo.REPO_SETTINGS, nothing else: any other key would
# be ignored with a warning). tests/test_config.py checks the two lists agree.
_REPO = """
# What a repository may set: excludes and ruff rules are added to each user's own; the gate and
# the severity floor apply where they are stricter than the user's. A review of commits (branch,
# commit, range, PR) reads this file from its base revision, so a change to it applies once
# merged, and the review of the change reports it. Everything else is each user's own setting.

[review]
# Exit with code 1 when a finding at or above this severity is found (critical|high|medium|low).
# fail_on = "high"
# Show findings from this severity up (a user's lower floor wins).
# min_severity = "info"
# Glob patterns of files not to review (generated code, fixtures, vendored trees).
# exclude = ["docs/generated/*"]

[analyzers]
# Ruff rules to run in addition to each user's selection (the repository's own ruff config is
# not used).
# ruff_select = ["PL", "SIM"]
"""

REPO_TEMPLATE = _HEADER + _REPO
USER_TEMPLATE = _HEADER + _REVIEW + _ANALYZERS + _CUSTOM + _USER_ONLY


def write_repo_template(root: Path, name: str, *, force: bool = False) -> Path:
    """The repository file `root/name` (`.redline.toml`): a path in the repository, so a
    symbolic link there is the author's and is refused, never written through
    (nofollow.replace_file, like `.redline/dismissed.toml`)."""
    path = root / name
    if os.path.lexists(path) and not force:
        raise ConfigError(f"{path} already exists (use --force to overwrite)")
    try:
        replace_file(root, (name,), REPO_TEMPLATE.encode("utf-8"), mode=0o644)
    except NoFollowError as exc:
        raise ConfigError(
            f"refusing to write {exc.message}",
            hint="Redline writes a repository's files only as regular files inside it",
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path


def write_template(path: Path, *, include_models: bool, force: bool = False) -> Path:
    if path.exists() and not force:
        raise ConfigError(f"{path} already exists (use --force to overwrite)")
    path.parent.mkdir(parents=True, exist_ok=True)
    text = USER_TEMPLATE if include_models else REPO_TEMPLATE
    path.write_text(text, encoding="utf-8")
    return path
