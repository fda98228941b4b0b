import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FindingsStore, buildTree, countFindings, findingNodes } from '../src/findingsModel';
import { FOLDER, payload } from './fixtures';

test('grouped by file: files in path order, findings by line, unanchored last without a line', () => {
  const tree = buildTree([payload()], 'file');
  assert.deepEqual(tree.map((g) => [g.label, g.description]), [['app/api.py', '1 finding'], ['app/users.py', '3 findings']]);
  const users = tree[1];
  assert.deepEqual(users.children.map((n) => [n.label, n.description]), [
    ['Mutable default argument', 'line 7 · ruff'],
    ['SQL built from user input', 'line 42 · model'],
    ['Secret in the code', 'unanchored · model'],
  ]);
  assert.equal(users.uri, `${FOLDER}/app/users.py`);
});

test('grouped by severity: most serious first, empty severities left out', () => {
  const tree = buildTree([payload()], 'severity');
  assert.deepEqual(tree.map((g) => [g.label, g.description]), [
    ['Critical', '1 finding'], ['High', '1 finding'], ['Medium', '1 finding'], ['Low', '1 finding'],
  ]);
  assert.equal(tree[0].children[0].label, 'Secret in the code');
});

test('a stale finding says so and offers no fix; several sources are listed once each', () => {
  const stale = findingNodes([payload()]).find((n) => n.finding.id === 'RL-4')!;
  assert.equal(stale.description, 'line 3 · model, bandit · may be stale');
  assert.equal(stale.fixable, false);
});

test('Apply Fix only where the server can offer one: improved code, anchored, fresh', () => {
  const fixable = Object.fromEntries(findingNodes([payload()]).map((n) => [n.finding.id, n.fixable]));
  assert.deepEqual(fixable, { 'RL-1': true, 'RL-2': false, 'RL-3': false, 'RL-4': false });
});

test('an empty improved code is a deletion, still a fix', () => {
  const p = payload();
  p.files[0].findings[1].improved_code = '';
  assert.equal(findingNodes([p]).find((n) => n.finding.id === 'RL-2')!.fixable, true);
});

test('tooltip: severity, title, rule, place and comment, as plain text', () => {
  const node = findingNodes([payload()]).find((n) => n.finding.id === 'RL-2')!;
  assert.equal(node.tooltip, 'Low: Mutable default argument (B006)\napp/users.py · line 7 · ruff\n\nWhy it matters.');
  assert.equal(node.icon.id, 'info');
});

test('every row a sidebar may truncate has a tooltip with its whole text', () => {
  const p = payload();
  const long = 'A very long title that a narrow sidebar cuts off well before its end, so only a tooltip shows it';
  p.files[1].findings[0].title = long;
  for (const groupBy of ['file', 'severity'] as const) {
    for (const group of buildTree([p], groupBy)) {
      assert.ok(group.tooltip.startsWith(group.label), group.tooltip);
      assert.ok(group.tooltip.includes(group.description), group.tooltip);
      for (const row of group.children) {
        assert.ok(row.tooltip.includes(row.label) && row.tooltip.includes(row.description), row.tooltip);
      }
    }
  }
  assert.ok(findingNodes([p]).some((n) => n.tooltip.includes(long)));
  const file = buildTree([p], 'file')[1];
  assert.equal(file.tooltip, 'app/users.py — 3 findings: 1 Critical, 1 High, 1 Low');
  assert.equal(buildTree([p], 'severity')[0].tooltip, 'Critical — 1 finding in app/users.py');
});

test('each notification replaces its folder\'s list; an empty list empties the tree', () => {
  const store = new FindingsStore();
  store.update(payload());
  assert.equal(store.isEmpty(), false);
  assert.deepEqual(countFindings(store.payloads()), { Critical: 1, High: 1, Medium: 1, Low: 1, Info: 0 });
  store.update({ folder: FOLDER, taskId: 'abc123def456', scopeLabel: 'branch feature against main', files: [] });
  assert.equal(store.isEmpty(), true);
  assert.deepEqual(buildTree(store.payloads(), 'file'), []);
  assert.equal(store.scopeLabel(), 'branch feature against main');
});

test('two workspace folders keep their own lists', () => {
  const store = new FindingsStore();
  store.update(payload());
  const other = payload();
  other.folder = 'file:///work/other';
  other.files = [{ ...other.files[1], uri: 'file:///work/other/app/api.py' }];
  store.update(other);
  assert.equal(findingNodes(store.payloads()).length, 5);
  assert.equal(store.find('file:///work/other', 'RL-4')?.uri, 'file:///work/other/app/api.py');
  assert.equal(buildTree(store.payloads(), 'file').length, 3);
});

test('a partial list replaces only the files it names; an empty file entry removes the file', () => {
  const store = new FindingsStore();
  store.update({ ...payload(), full: true });
  // An edit above the SQL finding moved it two lines down: only app/users.py is sent.
  const users = payload().files[0];
  const moved = users.findings.map((f) => (f.id === 'RL-1' ? { ...f, line: 44, end_line: 46 } : f));
  store.update({ folder: FOLDER, taskId: 'abc123def456', scopeLabel: 'branch feature against main', full: false, files: [{ ...users, findings: moved }] });
  const tree = buildTree(store.payloads(), 'file');
  assert.deepEqual(tree.map((g) => [g.label, g.description]), [['app/api.py', '1 finding'], ['app/users.py', '3 findings']]);
  assert.equal(store.find(FOLDER, 'RL-1')?.description, 'line 44 · model');
  // Its code was rewritten: app/api.py comes with no findings left and leaves the tree.
  store.update({ folder: FOLDER, taskId: 'abc123def456', scopeLabel: null, full: false, files: [{ uri: `${FOLDER}/app/api.py`, path: 'app/api.py', findings: [] }] });
  assert.deepEqual(buildTree(store.payloads(), 'file').map((g) => g.label), ['app/users.py']);
  assert.deepEqual(countFindings(store.payloads()), { Critical: 1, High: 1, Medium: 0, Low: 1, Info: 0 });
  // A new review's whole list replaces everything, files not named included.
  store.update({ folder: FOLDER, taskId: 'next', scopeLabel: 'x', full: true, files: [payload().files[1]] });
  assert.deepEqual(findingNodes(store.payloads()).map((n) => n.finding.id), ['RL-4']);
});

test('a partial list with nothing shown before is the list', () => {
  const store = new FindingsStore();
  store.update({ ...payload(), full: false, files: [payload().files[1]] });
  assert.deepEqual(findingNodes(store.payloads()).map((n) => n.finding.id), ['RL-4']);
});
