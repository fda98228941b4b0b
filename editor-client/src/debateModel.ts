// What the debate view shows, folded from the server's `redline/debate` events, and the debate
// as Markdown (the export's fallback when the server has no report for it). Pure (no `vscode`):
// every event's effect is unit-tested.
import { DebateEventBody, DebateNotification, DebaterInfo, Severity, TurnKind } from './protocol';
import { formatCost } from './statusText';

export interface TurnEntry {
  type: 'turn';
  round: number;
  speaker: string;
  label: string;
  model: string;
  text: string;
  /** Undefined while the turn streams. */
  kind?: TurnKind;
  note?: string;
  tokens?: number;
  latencyMs?: number;
  toolCalls?: number;
}

export interface InterjectionEntry {
  type: 'interjection';
  round: number;
  text: string;
}

export interface NoteEntry {
  type: 'note';
  text: string;
}

export type DebateEntry = TurnEntry | InterjectionEntry | NoteEntry;

/** running: turns go on; concluding: the debate stopped, the summaries are being written;
 *  finished: the final event came. */
export type DebatePhase = 'running' | 'concluding' | 'finished';

export interface DebateFinal {
  findings: number;
  counts: Partial<Record<Severity, number>>;
  tokens?: number;
  costUsd?: number | null;
}

export interface DebateState {
  taskId: string;
  folder: string;
  scopeLabel: string;
  rounds: number;
  debaters: DebaterInfo[];
  entries: DebateEntry[];
  /** What the user sent that the server has not added to the transcript yet (it is added
   *  before the next turn). */
  pending: string[];
  phase: DebatePhase;
  stopped?: { reason: string; text: string };
  positions?: { label: string; text: string }[];
  summary?: { markdown: string; failed: boolean };
  final?: DebateFinal;
  /** The task ended without its final event (`redline/reviewState` failed or cancelled). */
  ended?: { how: 'failed' | 'cancelled'; text: string };
}

export function emptyDebate(taskId: string, folder: string): DebateState {
  return { taskId, folder, scopeLabel: '', rounds: 0, debaters: [], entries: [], pending: [], phase: 'running' };
}

/** Whether the user can still steer it (interject, stop). */
export function canSteer(state: DebateState | undefined): boolean {
  return state !== undefined && state.phase === 'running';
}

function modelOf(state: DebateState, speaker: string): string {
  return state.debaters.find((d) => d.name === speaker)?.model ?? '';
}

/** The turn of `speaker` in `round` still streaming (the last entry for it), if any. */
function openTurn(entries: readonly DebateEntry[], round: number, speaker: string): number {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i];
    if (e.type === 'turn' && e.round === round && e.speaker === speaker) return e.kind === undefined ? i : -1;
  }
  return -1;
}

function replaceAt<T>(items: readonly T[], index: number, item: T): T[] {
  return items.map((x, i) => (i === index ? item : x));
}

/** The state after one event. Events of another task are ignored, except `started`, which
 *  begins a new debate (the server runs one task at a time). */
export function reduceDebate(state: DebateState | undefined, n: DebateNotification): DebateState {
  if (state === undefined || state.taskId !== n.taskId) {
    if (n.event !== 'started' && state !== undefined) return state;
    state = emptyDebate(n.taskId, n.folder);
  }
  return apply(n.folder && n.folder !== state.folder ? { ...state, folder: n.folder } : state, n);
}

function apply(state: DebateState, e: DebateEventBody): DebateState {
  switch (e.event) {
    case 'started':
      return { ...state, scopeLabel: e.scopeLabel, rounds: e.rounds, debaters: e.debaters };
    case 'turnStarted': {
      const turn: TurnEntry = { type: 'turn', round: e.round, speaker: e.speaker, label: e.label, model: e.model, text: '' };
      return { ...state, entries: [...state.entries, turn] };
    }
    case 'delta': {
      const i = openTurn(state.entries, e.round, e.speaker);
      if (i < 0) {
        // A delta without its turnStarted (it was missed): start the turn from what is known.
        const d = state.debaters.find((x) => x.name === e.speaker);
        const turn: TurnEntry = { type: 'turn', round: e.round, speaker: e.speaker, label: d?.label ?? e.speaker, model: d?.model ?? '', text: e.text };
        return { ...state, entries: [...state.entries, turn] };
      }
      const turn = state.entries[i] as TurnEntry;
      return { ...state, entries: replaceAt(state.entries, i, { ...turn, text: turn.text + e.text }) };
    }
    case 'turnFinished': {
      const i = openTurn(state.entries, e.round, e.speaker);
      // The finished text is the turn's own (the streamed deltas include tool steps).
      const done: TurnEntry = {
        type: 'turn', round: e.round, speaker: e.speaker, label: e.label,
        model: i >= 0 ? (state.entries[i] as TurnEntry).model : modelOf(state, e.speaker),
        text: e.text, kind: e.kind,
        ...(e.note ? { note: e.note } : {}),
        ...(e.tokens !== undefined ? { tokens: e.tokens } : {}),
        ...(e.latencyMs !== undefined ? { latencyMs: e.latencyMs } : {}),
        ...(e.toolCalls !== undefined ? { toolCalls: e.toolCalls } : {}),
      };
      return { ...state, entries: i >= 0 ? replaceAt(state.entries, i, done) : [...state.entries, done] };
    }
    case 'interjection': {
      const at = state.pending.indexOf(e.text);
      const pending = at >= 0 ? state.pending.filter((_, j) => j !== at) : state.pending;
      return { ...state, pending, entries: [...state.entries, { type: 'interjection', round: e.round, text: e.text }] };
    }
    case 'note':
      return { ...state, entries: [...state.entries, { type: 'note', text: e.text }] };
    case 'stopped':
      // Words still queued will never be heard: the debate goes on to its summaries.
      return { ...state, phase: state.phase === 'finished' ? 'finished' : 'concluding', stopped: { reason: e.reason, text: e.text }, pending: [] };
    case 'summaries':
      return { ...state, positions: e.positions };
    case 'summary':
      return { ...state, summary: { markdown: e.markdown, failed: e.failed } };
    case 'final':
      return {
        ...state, phase: 'finished', pending: [],
        final: { findings: e.findings, counts: e.counts ?? {}, tokens: e.tokens, costUsd: e.costUsd },
      };
    default:
      return state;
  }
}

/** The debate's task failed or was cancelled (its `redline/reviewState`): over, with why. */
export function withEnd(state: DebateState, how: 'failed' | 'cancelled', text: string): DebateState {
  if (state.phase === 'finished') return state;
  return { ...state, phase: 'finished', pending: [], ended: { how, text } };
}

/** The user sent words to interject: shown as queued until the server adds them. */
export function withPending(state: DebateState, text: string): DebateState {
  return { ...state, pending: [...state.pending, text.trim()] };
}

/** The interjection was refused (the server answered with an error): no longer queued. */
export function withoutPending(state: DebateState, text: string): DebateState {
  const at = state.pending.indexOf(text.trim());
  return at < 0 ? state : { ...state, pending: state.pending.filter((_, j) => j !== at) };
}

// -- text ------------------------------------------------------------------------------------

/** What is debated, for a title that already says "Debate": the engine's scope label is
 *  "debate: branch x vs main …" (server/redline/debate/run.py), its own prefix left out here. */
export function debatedScope(state: DebateState): string {
  return state.scopeLabel.replace(/^debate:\s*/i, '');
}

export function turnHeading(t: TurnEntry): string {
  return `Round ${t.round} · ${t.label}`;
}

/** "security · openai/gpt-4o · 312 tokens · 1.2 s · 2 tool calls" */
export function turnMeta(t: TurnEntry): string {
  const parts = [t.speaker !== t.label.toLowerCase() ? t.speaker : '', t.model].filter((s) => s);
  if (t.kind === undefined) parts.push('speaking…');
  if (t.kind === 'pass') parts.push('passed');
  if (t.kind === 'skipped') parts.push('skipped');
  if (t.kind === 'stopped') parts.push('cut short');
  if (t.tokens) parts.push(`${t.tokens.toLocaleString('en-US')} tokens`);
  if (t.latencyMs !== undefined) parts.push(`${(t.latencyMs / 1000).toFixed(1)} s`);
  if (t.toolCalls) parts.push(`${t.toolCalls} tool call${t.toolCalls === 1 ? '' : 's'}`);
  return parts.join(' · ');
}

const STOP_REASONS: Record<string, string> = {
  rounds: 'all rounds taken',
  passed: 'every debater passed',
  budget: 'the budget ran out',
  user: 'stopped by you',
  debaters: 'fewer than two debaters left',
};

export function stopReason(reason: string): string {
  return STOP_REASONS[reason] ?? reason;
}

/** The view's one-line status under the title. */
export function debateStatusLine(state: DebateState): string {
  const taken = state.entries.filter((e): e is TurnEntry => e.type === 'turn' && e.kind !== undefined).length;
  const rounds = state.rounds ? ` of ${state.rounds}` : '';
  const round = Math.max(0, ...state.entries.map((e) => (e.type === 'note' ? 0 : e.round)));
  if (state.phase === 'running') {
    const speaking = [...state.entries].reverse().find((e): e is TurnEntry => e.type === 'turn' && e.kind === undefined);
    const who = speaking ? ` · ${speaking.label} is speaking…` : '';
    return `Debating: round ${round || 1}${rounds}${who}`;
  }
  if (state.ended) return `Debate ${state.ended.how}${state.ended.text ? `: ${state.ended.text}` : ''}`;
  const why = state.stopped ? ` (${stopReason(state.stopped.reason)})` : '';
  if (state.phase === 'concluding') return `Debate over after ${taken} turn${taken === 1 ? '' : 's'}${why}: writing the summary…`;
  const f = state.final;
  const found = f ? ` · ${f.findings} finding${f.findings === 1 ? '' : 's'}` : '';
  const tokens = f?.tokens ? ` · ${f.tokens.toLocaleString('en-US')} tokens` : '';
  const cost = f?.tokens ? ` · ${formatCost(f.costUsd)}` : '';
  return `Debate finished after ${taken} turn${taken === 1 ? '' : 's'}${why}${found}${tokens}${cost}`;
}

/** The debate as Markdown, from the events alone: the export when the server's report is not
 *  this debate's. The transcript quotes models, so their text is kept as they wrote it. */
export function debateMarkdown(state: DebateState): string {
  const out: string[] = [`# Redline debate: ${debatedScope(state) || 'change'}`, ''];
  if (state.debaters.length > 0) {
    out.push('Debaters: ' + state.debaters.map((d) => `${d.label} (${d.model})`).join(', ') + '.', '');
  }
  out.push('## Transcript', '');
  for (const e of state.entries) {
    if (e.type === 'turn') {
      out.push(`### ${turnHeading(e)}`, '', `_${turnMeta(e)}_`, '', e.text.trim() || '_(nothing said)_', '');
      if (e.note) out.push(`> ${e.note}`, '');
    } else if (e.type === 'interjection') {
      out.push(`### Round ${e.round} · You (interjection)`, '', e.text, '');
    } else {
      out.push(`> Note: ${e.text}`, '');
    }
  }
  if (state.stopped) out.push(`_Debate stopped: ${stopReason(state.stopped.reason)}. ${state.stopped.text}_`.replace(/ _$/, '_'), '');
  if (state.positions && state.positions.length > 0) {
    out.push('## Final positions (anonymous)', '');
    for (const p of state.positions) out.push(`### ${p.label}`, '', p.text.trim(), '');
  }
  if (state.summary) {
    out.push('## Summary', '');
    if (state.summary.failed) out.push('_The summarizer failed: the positions are listed as they are._', '');
    out.push(state.summary.markdown.trim(), '');
  }
  if (state.final || state.ended) out.push(`_${debateStatusLine({ ...state, phase: 'finished' })}._`, '');
  return out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd() + '\n';
}
