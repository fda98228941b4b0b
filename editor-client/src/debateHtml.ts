// The debate webview's HTML. Pure (markdown-it only), so its safety is unit-tested.
//
// The turns quote models that read the change under review, whose author is the attacker here:
// every text goes through reportHtml's renderer (raw HTML escaped, links inert, no images).
// Unlike the report, the page has a script — its own, with the nonce: it swaps in the transcript
// the extension renders (`render` messages) without reloading the page, so what the user is
// typing in the interjection box survives the stream of turns, and it posts the user's
// interjection, Stop and Export back. No script ever comes from the content.
import { DebateState, TurnEntry, canSteer, debateStatusLine, debatedScope, stopReason, turnHeading, turnMeta } from './debateModel';
import { REPORT_STYLE, contentSecurityPolicy, escapeHtml, renderMarkdown } from './reportHtml';

/** What the page's script posts to the extension. */
export type DebateViewMessage =
  | { type: 'ready' }
  | { type: 'interject'; text: string }
  | { type: 'stop' }
  | { type: 'export' };

/** What the extension posts to the page. */
export interface RenderMessage {
  type: 'render';
  html: string;
  status: string;
  canSteer: boolean;
  canExport: boolean;
}

export function isDebateViewMessage(value: unknown): value is DebateViewMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as { type?: unknown; text?: unknown };
  if (m.type === 'interject') return typeof m.text === 'string';
  return m.type === 'ready' || m.type === 'stop' || m.type === 'export';
}

function turnHtml(t: TurnEntry): string {
  const classes = ['turn', t.kind === undefined ? 'streaming' : `kind-${t.kind}`].join(' ');
  const text = t.text.trim() ? renderMarkdown(t.text) : `<p class="empty">${t.kind === undefined ? '…' : '(nothing said)'}</p>`;
  const note = t.note ? `<p class="note">${escapeHtml(t.note)}</p>` : '';
  return `<article class="${classes}" data-speaker="${escapeHtml(t.speaker)}" data-round="${t.round}">`
    + `<h3>${escapeHtml(turnHeading(t))}</h3><div class="meta">${escapeHtml(turnMeta(t))}</div>`
    + `<div class="text">${text}</div>${note}</article>`;
}

/** The transcript and everything after it: what a `render` message carries. */
export function debateBodyHtml(state: DebateState | undefined): string {
  if (state === undefined) return '<p class="empty">No debate yet: run "Redline: Start Debate…".</p>';
  const parts: string[] = [];
  parts.push(`<h1>Debate: ${escapeHtml(debatedScope(state) || 'starting…')}</h1>`);
  if (state.debaters.length > 0) {
    const who = state.debaters.map((d) => `<li><strong>${escapeHtml(d.label)}</strong> <span class="meta">${escapeHtml(d.model)}</span></li>`);
    parts.push(`<ul class="debaters">${who.join('')}</ul>`);
  }
  parts.push('<section class="transcript">');
  for (const e of state.entries) {
    if (e.type === 'turn') parts.push(turnHtml(e));
    else if (e.type === 'interjection') {
      parts.push(`<article class="interjection"><h3>You · before a turn of round ${e.round}</h3><div class="text">${renderMarkdown(e.text)}</div></article>`);
    } else parts.push(`<p class="note">${escapeHtml(e.text)}</p>`);
  }
  for (const text of state.pending) {
    parts.push(`<article class="interjection pending"><h3>You · queued for the next turn</h3><div class="text">${renderMarkdown(text)}</div></article>`);
  }
  parts.push('</section>');
  if (state.stopped) {
    const text = state.stopped.text ? `: ${escapeHtml(state.stopped.text)}` : '';
    parts.push(`<p class="stopped">Debate stopped (${escapeHtml(stopReason(state.stopped.reason))})${text}</p>`);
  }
  if (state.positions && state.positions.length > 0) {
    parts.push('<section class="positions"><h2>Final positions (anonymous)</h2>');
    for (const p of state.positions) parts.push(`<h3>${escapeHtml(p.label)}</h3>${renderMarkdown(p.text)}`);
    parts.push('</section>');
  }
  if (state.ended) {
    parts.push(`<p class="stopped ended">${escapeHtml(debateStatusLine(state))}</p>`);
  }
  if (state.summary) {
    const failed = state.summary.failed ? '<p class="note">The summarizer failed: the positions are listed as they are.</p>' : '';
    parts.push(`<section class="summary"><h2>Summary</h2>${failed}${renderMarkdown(state.summary.markdown)}</section>`);
  } else if (state.phase === 'concluding' && !state.ended) {
    parts.push('<p class="empty">Writing the summary…</p>');
  }
  return parts.join('\n');
}

export function renderMessage(state: DebateState | undefined): RenderMessage {
  return {
    type: 'render',
    html: debateBodyHtml(state),
    status: state ? debateStatusLine(state) : '',
    canSteer: canSteer(state),
    canExport: state !== undefined && state.phase === 'finished',
  };
}

const STYLE = `${REPORT_STYLE}
body { padding-bottom: 10em; }
h1 { font-size: 1.4em; }
.debaters { list-style: none; padding: 0; display: flex; gap: 1.5em; flex-wrap: wrap; }
.meta { opacity: .75; font-size: .9em; }
article { border-left: 3px solid var(--vscode-panel-border); padding: .2em 0 .2em .9em; margin: 1em 0; }
article h3 { margin: 0; }
article.streaming { border-left-color: var(--vscode-progressBar-background); }
article.interjection { border-left-color: var(--vscode-textLink-foreground); background: var(--vscode-textBlockQuote-background); }
article.pending { opacity: .7; font-style: italic; }
.note, .stopped { opacity: .85; font-style: italic; }
.summary { border-top: 2px solid var(--vscode-panel-border); margin-top: 1.5em; }
#controls { position: fixed; left: 0; right: 0; bottom: 0; padding: .6em 1.5em; background: var(--vscode-editor-background); border-top: 1px solid var(--vscode-panel-border); }
#status { margin-bottom: .4em; }
#interject-text { width: 100%; box-sizing: border-box; min-height: 3em; font-family: inherit; color: var(--vscode-input-foreground); background: var(--vscode-input-background); border: 1px solid var(--vscode-input-border, var(--vscode-panel-border)); }
#buttons { display: flex; gap: .5em; margin-top: .4em; }
button { color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: .3em .9em; cursor: pointer; }
button.secondary { color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); }
button:disabled, textarea:disabled { opacity: .5; cursor: default; }
button:disabled { color: var(--vscode-disabledForeground); background: var(--vscode-button-secondaryBackground); }`;

// The page's own script: no content reaches it but the HTML the extension rendered safely.
const SCRIPT = `
const vscode = acquireVsCodeApi();
const body = document.getElementById('debate');
const text = document.getElementById('interject-text');
const send = document.getElementById('interject-send');
const stop = document.getElementById('stop');
const exp = document.getElementById('export');
const status = document.getElementById('status');
function interject() {
  const value = text.value.trim();
  if (!value || send.disabled) return;
  vscode.postMessage({ type: 'interject', text: value });
  text.value = '';
}
send.addEventListener('click', interject);
text.addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); interject(); } });
stop.addEventListener('click', () => vscode.postMessage({ type: 'stop' }));
exp.addEventListener('click', () => vscode.postMessage({ type: 'export' }));
window.addEventListener('message', (event) => {
  const m = event.data;
  if (!m || m.type !== 'render') return;
  const atEnd = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  body.innerHTML = m.html;
  status.textContent = m.status;
  text.disabled = send.disabled = stop.disabled = !m.canSteer;
  exp.disabled = !m.canExport;
  if (atEnd) window.scrollTo(0, document.body.scrollHeight);
});
vscode.postMessage({ type: 'ready' });`;

/** The whole page: the state as it is now, then `render` messages keep it current. */
export function debatePage(state: DebateState | undefined, nonce: string): string {
  const m = renderMessage(state);
  const off = (on: boolean) => (on ? '' : ' disabled');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(nonce, { script: true })}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${nonce}">${STYLE}</style><title>Redline Debate</title></head>
<body><main id="debate">${m.html}</main>
<div id="controls">
<div id="status" class="meta">${escapeHtml(m.status)}</div>
<textarea id="interject-text" aria-label="Interjection" placeholder="Add your words to the debate (Ctrl+Enter): they go to the next debater"${off(m.canSteer)}></textarea>
<div id="buttons"><button id="interject-send"${off(m.canSteer)}>Interject</button><button id="stop" class="secondary"${off(m.canSteer)}>Stop Debate</button><button id="export" class="secondary"${off(m.canExport)}>Export Markdown</button></div>
</div>
<script nonce="${nonce}">${SCRIPT}</script>
</body></html>`;
}
