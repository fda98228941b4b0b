import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IDLE, ReviewStatus, countsText, reduce, statusBarView, viewDescription, withCurrentCounts } from '../src/statusText';
import { emptyCounts } from '../src/findingsModel';
import { ReviewStateEvent } from '../src/protocol';

const F = 'file:///work/demo';
const base = { folder: F, taskId: 't1', scope: 'branch', request: 'branch against main', elapsed: 1 };
const run = (...events: Partial<ReviewStateEvent>[]): ReviewStatus =>
  events.reduce<ReviewStatus>((s, e) => reduce(s, { ...base, state: 'stage', ...e } as ReviewStateEvent), IDLE);

test('idle', () => {
  assert.equal(statusBarView(IDLE).text, '$(eye) Redline');
  assert.equal(statusBarView(IDLE).click, 'focus');
  assert.equal(viewDescription(IDLE, null, emptyCounts()), '');
});

test('started, then a stage, then file progress; a click offers Cancel', () => {
  assert.equal(statusBarView(run({ state: 'started' })).text, '$(sync~spin) Redline: starting…');
  assert.equal(statusBarView(run({ state: 'started' }, { state: 'stage', stage: 'analyzing' })).text, '$(sync~spin) Redline: analyzing…');
  const s = run({ state: 'started' }, { state: 'progress', stage: 'reviewing', done: 12, total: 40, tokens: 1234, costUsd: 0.5 });
  assert.equal(statusBarView(s).text, '$(sync~spin) Redline: reviewing 12/40 files…');
  assert.equal(statusBarView(s).click, 'cancel');
  assert.equal(statusBarView(run({ state: 'stage', stage: 'done' })).text, '$(sync~spin) Redline: finishing…');
  assert.match(statusBarView(s).tooltip, /1,234 tokens/);
  assert.equal(viewDescription(s, null, emptyCounts()), 'reviewing branch against main · 0 so far · 1,234 tokens · $0.50');
});

test('a stage event without numbers keeps the count of the same stage, drops another stage\'s', () => {
  const same = run({ state: 'progress', stage: 'reviewing', done: 3, total: 7 }, { state: 'stage', stage: 'reviewing' });
  assert.equal(statusBarView(same).text, '$(sync~spin) Redline: reviewing 3/7 files…');
  const next = run({ state: 'progress', stage: 'reviewing', done: 7, total: 7 }, { state: 'stage', stage: 'verifying' });
  assert.equal(statusBarView(next).text, '$(sync~spin) Redline: verifying…');
});

test('finished: counted as VS Code\'s Problems panel counts (⛔ errors, ⚠ warnings, ℹ infos); none', () => {
  // The server publishes Critical and High as errors, Medium as warnings, Low as information and
  // Info as hints, which the Problems panel does not list.
  const done = run({ state: 'finished', label: 'branch feature against main', counts: { Medium: 2, Low: 1, High: 1 }, tokens: 5000, costUsd: 0.0042 });
  assert.equal(statusBarView(done).text, 'Redline: 1 ⛔ 2 ⚠ 1 ℹ');
  assert.match(statusBarView(done).tooltip, /As in the Problems panel: 1 error, 2 warnings, 1 info\./);
  assert.equal(statusBarView(done).click, 'focus');
  const none = run({ state: 'finished', counts: {} });
  assert.equal(statusBarView(none).text, 'Redline: no findings');
  assert.equal(countsText({ ...emptyCounts(), Critical: 2 }), '2 ⛔');
  assert.equal(countsText({ ...emptyCounts(), Info: 2, Low: 1 }), '1 ℹ 2 hints');
  assert.equal(
    viewDescription(done, null, { ...emptyCounts(), Medium: 2, Low: 1, High: 1 }),
    'branch feature against main · 4 findings (1 ⛔ 2 ⚠ 1 ℹ) · 5,000 tokens · $0.0042',
  );
});

test('the status bar leaves out what Problems leaves out: hints and unanchored findings, named in its tooltip', () => {
  const done = run({ state: 'finished', counts: { High: 1, Info: 2, Medium: 1 } });
  // The sidebar lists 4 findings; one Medium is unanchored (no line, no diagnostic).
  const listed = { ...emptyCounts(), High: 1, Info: 2, Medium: 1 };
  const inProblems = { ...emptyCounts(), High: 1, Info: 2 };
  const after = withCurrentCounts(done, listed, inProblems);
  assert.equal(statusBarView(after).text, 'Redline: 1 ⛔');
  assert.match(statusBarView(after).tooltip, /Not in Problems: 2 hints \(Info\), 1 unanchored finding \(in the sidebar\)\./);
  const onlyHints = withCurrentCounts(done, { ...emptyCounts(), Info: 2 }, { ...emptyCounts(), Info: 2 });
  assert.equal(statusBarView(onlyHints).text, 'Redline: no problems');
  assert.match(statusBarView(onlyHints).tooltip, /2 hints/);
});

test('a model without a price is "unpriced", never $0.0000, and no stale cost lingers', () => {
  // Before the first answer the server knows no cost (none is sent); after it, none for a
  // model litellm has no price for.
  const running = run(
    { state: 'started' },
    { state: 'stage', stage: 'planning', tokens: 0 },
    { state: 'progress', stage: 'reviewing', done: 1, total: 4, tokens: 812 },
  );
  assert.equal(viewDescription(running, null, emptyCounts()), 'reviewing branch against main · 0 so far · 812 tokens · unpriced');
  assert.match(statusBarView(running).tooltip, /812 tokens\nunpriced/);
  // A cost once known and then no longer (an unpriced fallback answered) is not kept.
  const mixed = run({ state: 'progress', tokens: 10, costUsd: 0.001 }, { state: 'progress', tokens: 20 });
  assert.doesNotMatch(viewDescription(mixed, null, emptyCounts()), /\$/);
  const done = run({ state: 'finished', label: 'branch feature', counts: { Low: 1 }, tokens: 5000 });
  assert.equal(viewDescription(done, null, { ...emptyCounts(), Low: 1 }), 'branch feature · 1 finding (1 ℹ) · 5,000 tokens · unpriced');
  assert.doesNotMatch(statusBarView(done).tooltip, /\$0/);
  // No model called: nothing about tokens or cost.
  const offline = run({ state: 'finished', label: 'branch feature', counts: {}, tokens: 0 });
  assert.equal(viewDescription(offline, null, emptyCounts()), 'branch feature · no findings');
});

test('after a dismissal the counts follow the list the sidebar shows', () => {
  const done = run({ state: 'finished', counts: { High: 1, Low: 1 } });
  const after = withCurrentCounts(done, { ...emptyCounts(), Low: 1 }, { ...emptyCounts(), Low: 1 });
  assert.equal(statusBarView(after).text, 'Redline: 1 ℹ');
  // While running, a findings list (early findings) does not turn the status into a result.
  const running = run({ state: 'started' });
  assert.equal(withCurrentCounts(running, { ...emptyCounts(), Low: 1 }, { ...emptyCounts(), Low: 1 }), running);
});

test('failed and cancelled', () => {
  const failed = run({ state: 'failed', error: 'no model configured' });
  assert.equal(statusBarView(failed).text, '$(error) Redline: failed');
  assert.match(statusBarView(failed).tooltip, /no model configured/);
  const cancelled = run({ state: 'started' }, { state: 'cancelled', reason: 'cancelled by the user' });
  assert.equal(statusBarView(cancelled).text, '$(circle-slash) Redline: cancelled');
  assert.equal(statusBarView(cancelled).click, 'focus');
});

test('no server: the status bar says so until one runs, and a click shows the output', () => {
  const down: ReviewStatus = { phase: 'noServer', error: 'The Redline language server (redline) was not found on PATH.' };
  assert.equal(statusBarView(down).text, '$(debug-disconnect) Redline: no server');
  assert.equal(statusBarView(down).click, 'output');
  assert.match(statusBarView(down).tooltip, /not found on PATH/);
  assert.equal(viewDescription(down, 'branch x', emptyCounts()), 'the Redline server is not running');
});

test('a failed or cancelled review names itself, not the review whose list is still shown', () => {
  const failed = run({ state: 'started', request: 'pr 12' }, { state: 'failed', request: 'pr 12', error: 'gh is not installed' });
  const shown = { ...emptyCounts(), Critical: 1 };
  assert.equal(viewDescription(failed, 'commit abc "Export"', shown), 'pr 12 failed · showing commit abc "Export" · 1 finding (1 ⛔)');
  assert.equal(viewDescription(failed, null, emptyCounts()), 'pr 12 failed');
  const cancelled = run({ state: 'cancelled', request: 'branch against main', reason: 'by the user' });
  assert.equal(viewDescription(cancelled, null, emptyCounts()), 'branch against main cancelled');
});
