import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DebateState, TurnEntry, canSteer, debateMarkdown, debateStatusLine, reduceDebate, withEnd, withPending, withoutPending,
} from '../src/debateModel';
import { DebateEventBody, DebateNotification } from '../src/protocol';
import { FOLDER } from './fixtures';

const DEBATERS = [
  { name: 'security', label: 'Security', model: 'openai/alice' },
  { name: 'performance', label: 'Performance', model: 'openai/bob' },
];

const ev = (body: DebateEventBody, taskId = 't1'): DebateNotification => ({ folder: FOLDER, taskId, ...body });
const run = (...bodies: DebateEventBody[]): DebateState =>
  bodies.reduce<DebateState | undefined>((s, b) => reduceDebate(s, ev(b)), undefined) as DebateState;

const STARTED: DebateEventBody = { event: 'started', debaters: DEBATERS, rounds: 2, scopeLabel: 'branch feature vs main' };
const turns = (s: DebateState) => s.entries.filter((e): e is TurnEntry => e.type === 'turn');

test('a turn streams in pieces, then its finished text replaces what streamed', () => {
  const streaming = run(
    STARTED,
    { event: 'turnStarted', round: 1, speaker: 'security', label: 'Security', model: 'openai/alice' },
    { event: 'delta', round: 1, speaker: 'security', text: 'The shell ' },
    { event: 'delta', round: 1, speaker: 'security', text: 'call is unsafe' },
  );
  assert.equal(turns(streaming).length, 1);
  assert.equal(turns(streaming)[0].text, 'The shell call is unsafe');
  assert.equal(turns(streaming)[0].kind, undefined);
  assert.equal(debateStatusLine(streaming), 'Debating: round 1 of 2 · Security is speaking…');
  const done = reduceDebate(streaming, ev({
    event: 'turnFinished', round: 1, speaker: 'security', label: 'Security', kind: 'turn',
    text: 'The shell call in `export` is unsafe.', tokens: 120, latencyMs: 1500, toolCalls: 1,
  }));
  assert.deepEqual(turns(done).map((t) => [t.label, t.model, t.kind, t.text]), [['Security', 'openai/alice', 'turn', 'The shell call in `export` is unsafe.']]);
  assert.equal(debateStatusLine(done), 'Debating: round 1 of 2');
});

test('turns, interjections and notes keep their order; the same speaker in the next round is a new turn', () => {
  const s = run(
    STARTED,
    { event: 'turnStarted', round: 1, speaker: 'security', label: 'Security', model: 'openai/alice' },
    { event: 'turnFinished', round: 1, speaker: 'security', label: 'Security', kind: 'turn', text: 'A' },
    { event: 'interjection', round: 1, text: 'What about the lockfile?' },
    { event: 'turnStarted', round: 1, speaker: 'performance', label: 'Performance', model: 'openai/bob' },
    { event: 'turnFinished', round: 1, speaker: 'performance', label: 'Performance', kind: 'skipped', text: '', note: 'the model failed' },
    { event: 'note', text: 'Performance was skipped' },
    { event: 'turnStarted', round: 2, speaker: 'security', label: 'Security', model: 'openai/alice' },
    { event: 'turnFinished', round: 2, speaker: 'security', label: 'Security', kind: 'pass', text: 'Nothing to add.' },
  );
  assert.deepEqual(s.entries.map((e) => (e.type === 'turn' ? `${e.round}:${e.speaker}:${e.kind}` : e.type)), [
    '1:security:turn', 'interjection', '1:performance:skipped', 'note', '2:security:pass',
  ]);
});

test('a delta whose turnStarted was missed still shows, under the debater\'s label', () => {
  const s = run(STARTED, { event: 'delta', round: 1, speaker: 'performance', text: 'hi' });
  assert.deepEqual(turns(s).map((t) => [t.label, t.model, t.text]), [['Performance', 'openai/bob', 'hi']]);
});

test('the user\'s words are queued until the server adds them; a refused one is dropped', () => {
  let s = withPending(run(STARTED), '  Is the input validated?  ');
  assert.deepEqual(s.pending, ['Is the input validated?']);
  s = reduceDebate(s, ev({ event: 'interjection', round: 1, text: 'Is the input validated?' }));
  assert.deepEqual(s.pending, []);
  assert.equal(s.entries.at(-1)?.type, 'interjection');
  assert.deepEqual(withoutPending(withPending(s, 'x'), 'x').pending, []);
});

test('stopped → concluding (no more steering, queued words dropped) → summaries → finished', () => {
  let s = withPending(run(STARTED), 'too late');
  assert.equal(canSteer(s), true);
  s = reduceDebate(s, ev({ event: 'stopped', reason: 'user', text: 'stopped after 1 turn' }));
  assert.equal(s.phase, 'concluding');
  assert.equal(canSteer(s), false);
  assert.deepEqual(s.pending, []);
  assert.match(debateStatusLine(s), /^Debate over after 0 turns \(stopped by you\): writing the summary…$/);
  s = reduceDebate(s, ev({ event: 'summaries', positions: [{ label: 'Debater A', text: 'Fix the shell call.' }] }));
  s = reduceDebate(s, ev({ event: 'summary', markdown: '## Consensus\n- fix it', failed: false }));
  s = reduceDebate(s, ev({ event: 'final', findings: 1, counts: { High: 1 }, tokens: 2345, costUsd: 0.0123 }));
  assert.equal(s.phase, 'finished');
  assert.equal(debateStatusLine(s), 'Debate finished after 0 turns (stopped by you) · 1 finding · 2,345 tokens · $0.01');
  assert.equal(canSteer(undefined), false);
});

test('another task\'s events are ignored; its started event begins a new debate', () => {
  const s = run(STARTED, { event: 'note', text: 'mine' });
  assert.equal(reduceDebate(s, ev({ event: 'note', text: 'theirs' }, 't2')), s);
  const next = reduceDebate(s, ev({ ...STARTED, scopeLabel: 'uncommitted changes' } as DebateEventBody, 't2'));
  assert.equal(next.taskId, 't2');
  assert.equal(next.scopeLabel, 'uncommitted changes');
  assert.deepEqual(next.entries, []);
});

test('the Markdown export has the transcript in order, the positions and the summary', () => {
  const s = run(
    STARTED,
    { event: 'turnStarted', round: 1, speaker: 'security', label: 'Security', model: 'openai/alice' },
    { event: 'turnFinished', round: 1, speaker: 'security', label: 'Security', kind: 'turn', text: 'Shell injection on line 21.', tokens: 10 },
    { event: 'interjection', round: 1, text: 'Check the caller.' },
    { event: 'stopped', reason: 'rounds', text: '' },
    { event: 'summaries', positions: [{ label: 'Debater A', text: 'Quote the argument.' }] },
    { event: 'summary', markdown: '### Consensus\n- quote it', failed: true },
    { event: 'final', findings: 1, counts: { Critical: 1 } },
  );
  const md = debateMarkdown(s);
  assert.match(md, /^# Redline debate: branch feature vs main\n/);
  assert.match(md, /Debaters: Security \(openai\/alice\), Performance \(openai\/bob\)\./);
  const order = ['### Round 1 · Security', 'Shell injection on line 21.', '### Round 1 · You (interjection)', 'Check the caller.',
    '_Debate stopped: all rounds taken._', '## Final positions (anonymous)', 'Quote the argument.', '## Summary', 'The summarizer failed', '- quote it'];
  const at = order.map((x) => md.indexOf(x));
  assert.ok(at.every((i) => i >= 0), `missing: ${order.filter((_, i) => at[i] < 0)}`);
  assert.deepEqual([...at].sort((a, b) => a - b), at);
  assert.doesNotMatch(md, /\n{3}/);
});

test('a debate whose task failed is over, says why, and keeps what was said', () => {
  const s = withEnd(withPending(run(STARTED, { event: 'note', text: 'said' }), 'x'), 'failed', 'no model for debater:security');
  assert.equal(s.phase, 'finished');
  assert.equal(canSteer(s), false);
  assert.deepEqual(s.pending, []);
  assert.equal(debateStatusLine(s), 'Debate failed: no model for debater:security');
  assert.equal(s.entries.length, 1);
  const done = reduceDebate(run(STARTED), ev({ event: 'final', findings: 0 }));
  assert.equal(withEnd(done, 'cancelled', 'late'), done); // a finished debate stays as it ended
  assert.match(debateMarkdown(s), /_Debate failed: no model for debater:security\._/);
});
