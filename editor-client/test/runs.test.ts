// A debate's or an ask's findings beside the review's: which run found each row, and the
// choice between all runs together and one alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FindingsStore, buildTree, findingNodes } from '../src/findingsModel';
import { FindingsPayload, RunInfo } from '../src/protocol';
import { keptRuns, runChoices, runsText, shownRuns } from '../src/runs';
import { FOLDER, finding } from './fixtures';

const REVIEW: RunInfo = { kind: 'review', taskId: 't1', label: 'branch feature vs main', findings: 2 };
const DEBATE: RunInfo = { kind: 'debate', taskId: 't2', label: 'uncommitted changes', findings: 1 };

function both(shown: FindingsPayload['shownRuns'] = null): FindingsPayload {
  return {
    folder: FOLDER, taskId: 't2', scopeLabel: 'uncommitted changes', full: true, runs: [REVIEW, DEBATE], shownRuns: shown,
    files: [{
      uri: `${FOLDER}/app/users.py`, path: 'app/users.py', findings: [
        finding({ id: 'RL-1', line: 3, title: 'Unused import', runs: ['review'] }),
        finding({ id: 'RL-2', line: 9, title: 'eval of file contents', runs: ['review', 'debate'] }),
        finding({ id: 'RL-3', line: 9, title: 'Do not eval file contents', runs: ['debate'] }),
      ],
    }],
  };
}

test('with a review and a debate kept, each row says which run found it', () => {
  const rows = Object.fromEntries(findingNodes([both()]).map((n) => [n.finding.id, n]));
  assert.equal(rows['RL-1'].description, 'line 3 · model · review');
  assert.equal(rows['RL-2'].description, 'line 9 · model · review, debate');
  assert.equal(rows['RL-3'].description, 'line 9 · model · debate');
  assert.match(rows['RL-3'].tooltip, /Found by the last debate\.$/);
  // The store keeps all three: the debate did not replace the review's findings.
  const store = new FindingsStore();
  store.update(both());
  assert.equal(buildTree(store.payloads(), 'file')[0].children.length, 3);
});

test('with one run kept, rows carry no run tag', () => {
  const one = { ...both(), runs: [REVIEW] };
  assert.equal(findingNodes([one])[0].description, 'line 3 · model');
});

test('the choices: all together, or one run alone; the current one is marked', () => {
  const runs = keptRuns([both()]);
  assert.deepEqual(runs.map((r) => r.kind), ['review', 'debate']);
  const choices = runChoices(runs, null);
  assert.deepEqual(choices.map((c) => [c.label, c.description, c.runs, c.picked]), [
    ['All runs together', 'Review + Debate · 3 findings', 'all', true],
    ['Review only', 'branch feature vs main · 2 findings', ['review'], false],
    ['Debate only', 'uncommitted changes · 1 action item', ['debate'], false],
  ]);
  const debateOnly = runChoices(runs, ['debate']);
  assert.deepEqual(debateOnly.map((c) => c.picked), [false, false, true]);
});

test('the sidebar line names the runs shown', () => {
  assert.equal(runsText([REVIEW], null), '');
  assert.equal(runsText([REVIEW, DEBATE], null), 'review + debate');
  assert.equal(runsText([REVIEW, DEBATE], ['debate']), 'debate only');
  assert.deepEqual(shownRuns([both(['review'])]), ['review']);
  assert.equal(shownRuns([both()]), null);
});
