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
