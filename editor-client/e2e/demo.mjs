// The demo change the test reviews (scripts/demo.py: branch feature/export against main) and
// what the CLI says about it: the editor must show the same findings, with the same ids.

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { check } from './steps.mjs';

export const FILE = 'app/reports.py';

// The planted problems (scripts/demo.py EXPECTED) and what the offline review calls them.
export const EXPECTED = [
  { key: 'unused import', line: 4, title: 'Unused import `os`', severity: 'Low' },
  { key: 'shell injection', line: 21, title: 'Shell command built from non-constant input', severity: 'Critical' },
  { key: 'bare except', line: 27, title: 'Bare `except`', severity: 'Medium' },
  { key: 'mutable default', line: 31, title: 'Mutable default argument', severity: 'Medium' },
];

// The feature's files in other languages (scripts/demo.py POLYGLOT_FILES), one planted problem
// each, and the analyzer that finds it offline.
export const POLYGLOT = [
  { key: 'async promise executor', file: 'web/src/exportClient.ts', line: 11, title: 'Promise executor functions should not be `async`', severity: 'Medium', analyzer: 'oxlint' },
  { key: 'swallowed error', file: 'worker/export.go', line: 19, title: 'Error checked and then ignored', severity: 'High', analyzer: 'ast-grep' },
  { key: 'unchecked cd', file: 'scripts/publish_export.sh', line: 8, title: "Use 'cd ... || exit' or 'cd ... || return' in case cd fails", severity: 'Low', analyzer: 'shellcheck' },
  { key: 'latest base image', file: 'Dockerfile', line: 1, title: 'Using latest is prone to errors if the image will ever update', severity: 'Low', analyzer: 'hadolint' },
  { key: 'workflow script injection', file: '.github/workflows/export.yml', line: 18, title: 'Script injection through a `${{ }}` expression', severity: 'High', analyzer: 'zizmor' },
];

// What the diff of the demo's branch adds up to (the report's title and the review's label).
export const DIFF_SUMMARY = '10 files, +124 −2';

// VS Code's squiggle kind for a severity (Critical and High are errors, Medium warnings, Low
// infos), and the status bar's counts for a list of severities, as the Problems panel counts.
export const SQUIGGLE = { Critical: 'error', High: 'error', Medium: 'warning', Low: 'info' };
export function statusFor(severities) {
  const of = (...names) => severities.filter((s) => names.includes(s)).length;
  const [bad, warn, info] = [of('Critical', 'High'), of('Medium'), of('Low')];
  return `Redline: ${[bad ? `${bad} ⛔` : '', warn ? `${warn} ⚠` : '', info ? `${info} ℹ` : ''].filter(Boolean).join(' ') || 'no findings'}`;
}

// Build the demo repository at ctx.repo with scripts/demo.py, run by the venv's Python (the one
// next to `redline`).
export function buildDemoRepo(ctx) {
  const python = path.join(path.dirname(ctx.redline), 'python');
  ctx.harness.run(python, ['-c', 'import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); import demo; demo.build_demo_repo(Path(sys.argv[2]))', path.join(ctx.root, 'scripts'), ctx.repo], 'building the demo repository');
}

// The CLI's own offline review of the demo (`scope` e.g. ['--branch', 'main']), as its JSON. A
// separate cache: the CLI must not warm the one the editor's server uses.
export function cliReview(ctx, scope, failed) {
  const cliEnv = { ...ctx.env, REDLINE_CACHE_DIR: path.join(ctx.tmp, 'cli-cache') };
  const r = spawnSync(ctx.redline, ['review', ...scope, '--repo', ctx.repo, '--format', 'json', '--quiet'], { env: cliEnv, encoding: 'utf-8', timeout: 120_000 });
  check(r.status === 0, `${failed}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
