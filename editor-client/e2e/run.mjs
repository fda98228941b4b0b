#!/usr/bin/env node
// End-to-end test of the Redline VS Code extension in a real VS Code: code-server (VS Code in
// the browser) driven by Debian's Chromium through playwright-core, against the demo repository
// of scripts/demo.py reviewed offline (ruff + bandit, no model).
//
//   node run.mjs --vsix editor-client/redline-0.1.0.vsix --redline .venv/bin/redline
//
// This file reads the arguments, runs the scenario's steps in order and prints the summary.
// harness.mjs isolates the run (a temporary directory for HOME, XDG_*, REDLINE_CACHE_DIR, the VS
// Code user data; the user's Redline configuration, which does not exist yet) and starts and
// kills code-server and Chromium; steps.mjs numbers, times and screenshots the steps;
// workbench.mjs knows VS Code's DOM; scenario/*.mjs are the steps, grouped by what the user does
// (see README.md). On failure: a screenshot per step, the code-server and extension-host logs in
// editor-client/e2e/artifacts/, exit 1 (2 on the overall timeout).

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createHarness } from './harness.mjs';
import { debate } from './scenario/debate.mjs';
import { failedReviewAndCrash, noErrorLeftOnScreen } from './scenario/failures.mjs';
import { firstReview } from './scenario/first-review.mjs';
import { applyFixFromSidebar, quickFixAndDismiss } from './scenario/fix-and-dismiss.mjs';
import { exportReport, reportAndPickers } from './scenario/report-and-pickers.mjs';
import { checkPrerequisites, start } from './scenario/start.mjs';
import { openUserConfiguration } from './scenario/user-configuration.mjs';
import { createSteps, Failure } from './steps.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..');
const { values: opts } = parseArgs({
  options: {
    vsix: { type: 'string', default: path.join(ROOT, 'editor-client', 'redline-0.1.0.vsix') },
    redline: { type: 'string', default: path.join(ROOT, '.venv', 'bin', 'redline') },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
    artifacts: { type: 'string', default: path.join(HERE, 'artifacts') },
    timeout: { type: 'string', default: '240' }, // seconds, the whole run
    keep: { type: 'boolean', default: false }, // keep the temporary directory
    headed: { type: 'boolean', default: false },
    // Reproduce what a code-server user meets: redline.server.path only in the User settings.
    'server-path-in-user-settings-only': { type: 'boolean', default: false },
  },
});

// In the order they run: each step leaves the state the next one starts from (the fixed and
// dismissed findings, the open report panel, the saved file).
const SCENARIO = [
  start, // the demo repository, code-server, Chromium
  firstReview,
  quickFixAndDismiss,
  reportAndPickers,
  applyFixFromSidebar,
  exportReport,
  failedReviewAndCrash,
  openUserConfiguration,
  debate, // after the configuration step: the debaters are set in that file
  noErrorLeftOnScreen,
];

const artifacts = path.resolve(opts.artifacts);
const harness = createHarness({ here: HERE, artifacts, keep: opts.keep });
// What the steps share: the paths and environment of this run, the page once Chromium shows it,
// and the CLI's finding ids once the demo is reviewed.
const ctx = {
  opts,
  root: ROOT,
  here: HERE,
  vsix: path.resolve(opts.vsix),
  redline: path.resolve(opts.redline),
  artifacts,
  tmp: harness.tmp,
  repo: path.join(harness.tmp, 'demo'),
  env: harness.env,
  harness,
  page: null,
  ids: null,
};
ctx.steps = createSteps({ stepsDir: harness.stepsDir, page: () => ctx.page });

const timeout = harness.overallTimeout(Number(opts.timeout), async () => {
  console.error(`e2e: FAILED — the overall timeout of ${opts.timeout} s was exceeded in step ${ctx.steps.current()}; killing code-server and Chromium`);
  await ctx.steps.shot('TIMEOUT');
  harness.saveLogs();
  console.error(`e2e: screenshots in ${harness.stepsDir}; code-server log and VS Code logs in ${artifacts}`);
  await harness.exit(2);
});

try {
  checkPrerequisites(ctx);
  for (const part of SCENARIO) await part(ctx);
  timeout.disarm();
  ctx.steps.printSummary(['sidebar.png', 'report.png', 'debate.png'].map((f) => path.join(artifacts, f)));
  await harness.exit(0);
} catch (err) {
  if (!timeout.fired()) {
    timeout.disarm();
    console.error(`e2e: FAILED in step "${err.step ?? '?'}": ${err instanceof Failure ? err.message : err.stack}`);
    harness.saveLogs();
    console.error(`e2e: screenshots in ${harness.stepsDir}; code-server log and VS Code logs in ${artifacts}`);
    await harness.exit(1);
  }
}
