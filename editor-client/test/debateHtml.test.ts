import { test } from 'node:test';
import assert from 'node:assert/strict';
import { debateBodyHtml, debatePage, isDebateViewMessage, renderMessage } from '../src/debateHtml';
import { DebateState, emptyDebate, reduceDebate } from '../src/debateModel';
import { DebateEventBody } from '../src/protocol';
import { FOLDER } from './fixtures';

const run = (...bodies: DebateEventBody[]): DebateState =>
  bodies.reduce((s, b) => reduceDebate(s, { folder: FOLDER, taskId: 't1', ...b }), emptyDebate('t1', FOLDER));

const STARTED: DebateEventBody = {
  event: 'started', rounds: 1, scopeLabel: 'debate: branch <x>',
  debaters: [{ name: 'security', label: 'Security', model: 'openai/alice' }, { name: 'perf', label: 'Perf', model: 'openai/bob' }],
};

test('what a debater says (quoting the attacker\'s change) is shown, never run', () => {
  const s = run(
    STARTED,
    { event: 'turnStarted', round: 1, speaker: 'security', label: 'Security <img src=x onerror=alert(1)>', model: 'm' },
    { event: 'delta', round: 1, speaker: 'security', text: '<script>alert(1)</script> [x](javascript:alert(1)) ![p](https://evil.example/p.png)' },
    { event: 'note', text: '<b>note</b>' },
  );
  const html = debateBodyHtml(s);
  assert.doesNotMatch(html, /<script>|<img|<b>|href=/);
  assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.match(html, /<h1>Debate: branch &lt;x&gt;<\/h1>/);
  assert.match(html, /<article class="turn streaming" data-speaker="security" data-round="1">/);
});

test('the page runs its own script only; steering is disabled once the debate stopped', () => {
  const running = debatePage(run(STARTED), 'N0nce');
  assert.match(running, /script-src 'nonce-N0nce'/);
  assert.match(running, /default-src 'none'/);
  assert.equal((running.match(/<script/g) ?? []).length, 1);
  assert.match(running, /<script nonce="N0nce">/);
  assert.match(running, /<button id="stop" class="secondary">/);
  assert.match(running, /<button id="export" class="secondary" disabled>/);
  const stopped = run(STARTED, { event: 'stopped', reason: 'user', text: '' });
  assert.equal(renderMessage(stopped).canSteer, false);
  assert.equal(renderMessage(stopped).canExport, false);
  assert.match(debatePage(stopped, 'n'), /<textarea id="interject-text"[^>]* disabled>/);
  assert.match(debatePage(stopped, 'n'), /<button id="stop" class="secondary" disabled>/);
  const finished = reduceDebate(stopped, { folder: FOLDER, taskId: 't1', event: 'final', findings: 0 });
  assert.equal(renderMessage(finished).canExport, true);
  assert.match(renderMessage(undefined).html, /No debate yet/);
});

test('interjections in order, queued ones marked, the summary last', () => {
  let s = run(
    STARTED,
    { event: 'turnStarted', round: 1, speaker: 'security', label: 'Security', model: 'openai/alice' },
    { event: 'turnFinished', round: 1, speaker: 'security', label: 'Security', kind: 'turn', text: 'Turn one.' },
    { event: 'interjection', round: 1, text: 'Heard.' },
  );
  s = { ...s, pending: ['Queued.'] };
  s = reduceDebate(s, { folder: FOLDER, taskId: 't1', event: 'summary', markdown: '## Action items\n- fix', failed: false });
  const html = debateBodyHtml(s);
  const at = ['Turn one.', 'Heard.', 'queued for the next turn', 'Queued.', '<h2>Summary</h2>', 'Action items'].map((x) => html.indexOf(x));
  assert.ok(at.every((i) => i >= 0), JSON.stringify(at));
  assert.deepEqual([...at].sort((a, b) => a - b), at);
});

test('only the page\'s own messages are taken from it', () => {
  assert.ok(isDebateViewMessage({ type: 'interject', text: 'hi' }));
  assert.ok(isDebateViewMessage({ type: 'stop' }));
  assert.ok(!isDebateViewMessage({ type: 'interject' }));
  assert.ok(!isDebateViewMessage({ type: 'run', command: 'x' }));
  assert.ok(!isDebateViewMessage('stop'));
});
