import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  askArgs, branchArgs, chooseFixAction, chooseFolder, commitArgs, debateArgs, dismissArgs, parsePullRequest, parseRounds, prArgs, rangeArgs, rangeError, serverErrorMessage, stagedArgs, uncommittedArgs,
} from '../src/args';

const F = 'file:///work/demo';

test('scope requests as redline.review takes them', () => {
  assert.deepEqual(uncommittedArgs(F), { scope: 'uncommitted', folder: F });
  assert.deepEqual(stagedArgs(), { scope: 'staged' });
  assert.deepEqual(branchArgs('', F), { scope: 'branch', folder: F }, 'empty setting: the server picks the base');
  assert.deepEqual(branchArgs(undefined), { scope: 'branch' });
  assert.deepEqual(branchArgs(' origin/main ', F), { scope: 'branch', base: 'origin/main', folder: F });
  assert.deepEqual(commitArgs('0123abc'), { scope: 'commit', ref: '0123abc' });
  assert.deepEqual(prArgs('12', F), { scope: 'pr', pr: '12', folder: F });
  assert.deepEqual(askArgs('  review PR 12 '), { request: 'review PR 12' });
});

test('pull request: number, #number, URL; anything else is refused with a reason', () => {
  assert.deepEqual(parsePullRequest(' 12 '), { ok: true, value: '12', number: 12 });
  assert.deepEqual(parsePullRequest('#7'), { ok: true, value: '7', number: 7 });
  const url = 'https://github.com/acme/app/pull/123/files';
  assert.deepEqual(parsePullRequest(url), { ok: true, value: url, number: 123 });
  for (const bad of ['', '0', '12a', 'https://github.com/acme/app/issues/3', 'ftp://h/o/r/pull/1', 'https://u:p@h/o/r/pull/1', 'javascript:alert(1)']) {
    const r = parsePullRequest(bad);
    assert.equal(r.ok, false, bad);
  }
});

test('the folder of the active editor, else the first', () => {
  const folders = ['file:///work/a', 'file:///work/ab'];
  assert.equal(chooseFolder('file:///work/ab/x.py', folders), 'file:///work/ab');
  assert.equal(chooseFolder('file:///elsewhere/x.py', folders), 'file:///work/a');
  assert.equal(chooseFolder(undefined, []), undefined);
});

test('Apply Fix picks the server\'s apply action for this finding, else its suggested code', () => {
  const uri = `${F}/a.py`;
  const actions = [
    { title: 'Redline: apply fix — other', edit: {}, command: { command: 'redline.fixApplied', arguments: [uri, 'RL-2'] } },
    { title: 'Redline: dismiss finding — x', command: { command: 'redline.dismissFinding', arguments: [uri, 'RL-1'] } },
    { title: 'Redline: apply fix — x', edit: {}, command: { command: 'redline.fixApplied', arguments: [uri, 'RL-1'] } },
  ];
  assert.deepEqual(chooseFixAction(actions, 'RL-1'), { kind: 'apply', action: actions[2] });
  const suggested = [{ title: 'Redline: show suggested code — x', command: { command: 'redline.showSuggestedCode', arguments: [uri, 'RL-1'] } }];
  assert.equal(chooseFixAction(suggested, 'RL-1').kind, 'suggested');
  assert.equal(chooseFixAction(actions, 'RL-9').kind, 'none');
});

test('server error messages lose the command prefix', () => {
  assert.equal(serverErrorMessage(new Error("redline.review: unknown scope 'x'")), "unknown scope 'x'");
  assert.equal(serverErrorMessage({ code: -32602, message: 'redline.export: bad' }), 'bad');
  assert.match(serverErrorMessage({ code: -32601, message: 'Method Not Found: redline/refs' }, 'redline/refs'),
    /does not support redline\/refs: update Redline/);
});

test('debate arguments: a range is A..B or A...B; rounds 1-20 or empty for the default', () => {
  assert.equal(rangeError('main..HEAD'), undefined);
  assert.equal(rangeError(' v1.0...feature/x '), undefined);
  for (const bad of ['', 'main', 'main..', '..HEAD', 'a b..c']) assert.ok(rangeError(bad), bad);
  assert.deepEqual(rangeArgs(' main..HEAD ', 'file:///w'), { scope: 'range', range: 'main..HEAD', folder: 'file:///w' });
  assert.deepEqual(parseRounds(''), { ok: true, rounds: undefined });
  assert.deepEqual(parseRounds(' 4 '), { ok: true, rounds: 4 });
  for (const bad of ['0', '21', '-1', '2.5', 'three']) assert.equal(parseRounds(bad).ok, false, bad);
  assert.deepEqual(debateArgs({ scope: 'staged' }, undefined), { scope: 'staged' });
  assert.deepEqual(debateArgs({ scope: 'branch', base: 'main' }, 2), { scope: 'branch', base: 'main', rounds: 2 });
});

test('dismiss: that finding only, or all like it', () => {
  assert.deepEqual(dismissArgs('RL-0123456789ab', 'fine', false), { id: 'RL-0123456789ab', reason: 'fine' });
  assert.deepEqual(dismissArgs('RL-0123456789ab', 'fine', true), { id: 'RL-0123456789ab', reason: 'fine', all: true });
});
