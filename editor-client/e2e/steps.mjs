// The test's bookkeeping: the log, the steps (each one numbered, timed and screenshotted), the
// checks that fail a step, the PASS lines and timings, and the summary printed at the end.

import path from 'node:path';

// How long one step may wait for the UI, and for a review to finish.
export const STEP_TIMEOUT = 30_000;
export const REVIEW_TIMEOUT = 90_000;

const started = Date.now();
export const secs = (ms) => (ms / 1000).toFixed(2);
export const log = (msg) => console.log(`e2e [${secs(Date.now() - started).padStart(6)} s] ${msg}`);
export const elapsed = () => Date.now() - started;

// A failed check: reported with its message alone (any other error with its stack).
export class Failure extends Error {}
export function check(cond, msg) {
  if (!cond) throw new Failure(msg);
}

// The steps of one run. `page` returns the browser page once there is one (no screenshot before).
export function createSteps({ stepsDir, page }) {
  const results = [];
  const figures = []; // the timings, printed in the summary as they are
  let number = 0;

  async function shot(name) {
    const p = page();
    if (!p) return null;
    const file = path.join(stepsDir, `${String(number).padStart(2, '0')}-${name}.png`);
    try {
      await p.screenshot({ path: file, fullPage: true, timeout: 10_000 });
      return file;
    } catch {
      return null;
    }
  }

  // Run one step: its screenshot either way, and on failure the step's name on the error.
  async function step(name, fn) {
    number += 1;
    const t = Date.now();
    log(`step ${number}: ${name}`);
    try {
      const out = await fn();
      await shot(name.replace(/[^a-z0-9]+/gi, '-').toLowerCase());
      log(`  ok (${secs(Date.now() - t)} s)`);
      return out;
    } catch (err) {
      await shot(`FAILED-${name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`);
      err.step = name;
      throw err;
    }
  }

  function pass(check, detail) {
    results.push({ check, ok: true, detail });
    log(`PASS ${check}: ${detail}`);
  }

  function printSummary(screenshots) {
    console.log('e2e: summary');
    for (const r of results) console.log(`  PASS ${r.check}: ${r.detail}`);
    for (const f of figures) console.log(`  ${f}`);
    console.log(`  total: ${secs(elapsed())} s; screenshots: ${screenshots.join(', ')}`);
  }

  return { step, pass, shot, figures, printSummary, current: () => number };
}
