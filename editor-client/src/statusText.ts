// What the status bar and the view's description line say, from `redline/reviewState` events and
// the current findings. Pure (no `vscode`): every state's text is unit-tested.
import { ReviewStateEvent, Severity } from './protocol';
import { SeverityCounts, emptyCounts } from './findingsModel';

export type Phase = 'idle' | 'running' | 'finished' | 'cancelled' | 'failed' | 'noServer';

/** What the UI knows of the review: the fields of the last `redline/reviewState` events that
 *  still apply, and the phase they put it in. */
export interface ReviewStatus
  extends Partial<Pick<ReviewStateEvent,
    'folder' | 'taskId' | 'request' | 'label' | 'stage' | 'message' | 'done' | 'total' | 'tokens' | 'costUsd' | 'error' | 'reason'>> {
  phase: Phase;
  /** The findings listed (sidebar), by severity. */
  counts?: SeverityCounts;
  /** Of those, the ones with a diagnostic (anchored): what VS Code's Problems panel holds. */
  problems?: SeverityCounts;
}

export const IDLE: ReviewStatus = { phase: 'idle' };

function toCounts(raw: Partial<Record<Severity, number>> | undefined): SeverityCounts {
  return { ...emptyCounts(), ...(raw ?? {}) };
}

/** The status after one event. Progress numbers are kept until a later event replaces them, so
 *  a stage event ("verifying") does not make the file count flicker away. */
export function reduce(status: ReviewStatus, event: ReviewStateEvent): ReviewStatus {
  const base = { folder: event.folder, taskId: event.taskId, request: event.request };
  switch (event.state) {
    case 'started':
      return { phase: 'running', ...base, stage: undefined };
    case 'stage':
    case 'progress': {
      const prev = status.phase === 'running' && status.taskId === event.taskId ? status : undefined;
      const sameStage = prev !== undefined && prev.stage === event.stage;
      return {
        phase: 'running',
        ...base,
        stage: event.stage ?? prev?.stage,
        message: event.message,
        done: event.done ?? (sameStage ? prev?.done : undefined),
        total: event.total ?? (sameStage ? prev?.total : undefined),
        tokens: event.tokens ?? prev?.tokens,
        // An event with tokens says what is spent: no cost in it means none is known yet.
        costUsd: event.tokens !== undefined ? event.costUsd : prev?.costUsd,
      };
    }
    case 'finished':
      return {
        phase: 'finished',
        ...base,
        label: event.label,
        tokens: event.tokens,
        costUsd: event.costUsd,
        counts: toCounts(event.counts),
      };
    case 'cancelled':
      return { phase: 'cancelled', ...base, reason: event.reason };
    case 'failed':
      return { phase: 'failed', ...base, error: event.error };
    default:
      return status;
  }
}

/** After a review finished, the counts follow the list the sidebar shows (dismissed and fixed
 *  findings leave it; the minimum severity filters it); `problems`: those of them with a
 *  diagnostic. */
export function withCurrentCounts(status: ReviewStatus, counts: SeverityCounts, problems: SeverityCounts): ReviewStatus {
  return status.phase === 'finished' ? { ...status, counts, problems } : status;
}

// How the server publishes each severity (lsp/publish.py SEVERITY), and so how VS Code counts it.
export function errors(counts: SeverityCounts): number {
  return counts.Critical + counts.High;
}

export function warnings(counts: SeverityCounts): number {
  return counts.Medium;
}

export function infos(counts: SeverityCounts): number {
  return counts.Low;
}

/** Info findings are published as hints: under the code, never in the Problems panel. */
export function hints(counts: SeverityCounts): number {
  return counts.Info;
}

function total(counts: SeverityCounts): number {
  return errors(counts) + warnings(counts) + infos(counts) + hints(counts);
}

function problemParts(counts: SeverityCounts): string[] {
  const parts: string[] = [];
  if (errors(counts) > 0) parts.push(`${errors(counts)} ⛔`);
  if (warnings(counts) > 0) parts.push(`${warnings(counts)} ⚠`);
  if (infos(counts) > 0) parts.push(`${infos(counts)} ℹ`);
  return parts;
}

/** "1 ⛔ 2 ⚠ 1 ℹ 2 hints": errors (Critical + High), warnings (Medium), infos (Low), as VS
 *  Code's Problems panel counts them, then the hints (Info); zero parts are left out. */
export function countsText(counts: SeverityCounts): string {
  const parts = problemParts(counts);
  const h = hints(counts);
  if (h > 0) parts.push(`${h} ${h === 1 ? 'hint' : 'hints'}`);
  return parts.length > 0 ? parts.join(' ') : 'no findings';
}

const plural = (n: number, word: string, many = `${word}s`) => `${n} ${n === 1 ? word : many}`;

/** The status bar's counts: exactly what the Problems panel holds of Redline's. */
function problemsView(status: ReviewStatus): { text: string; tooltip: string[] } {
  const listed = status.counts ?? emptyCounts();
  const problems = status.problems ?? listed;
  const parts = problemParts(problems);
  const text = parts.length > 0 ? parts.join(' ') : total(listed) > 0 ? 'no problems' : 'no findings';
  const tooltip = [`As in the Problems panel: ${plural(errors(problems), 'error')}, ${plural(warnings(problems), 'warning')}, ${plural(infos(problems), 'info', 'infos')}.`];
  const off: string[] = [];
  if (hints(problems) > 0) off.push(`${plural(hints(problems), 'hint')} (Info)`);
  const unanchored = total(listed) - total(problems);
  if (unanchored > 0) off.push(`${plural(unanchored, 'unanchored finding')} (in the sidebar)`);
  if (off.length > 0) tooltip.push(`Not in Problems: ${off.join(', ')}.`);
  return { text, tooltip };
}

function runningText(status: ReviewStatus): string {
  const stage = status.stage;
  if (!stage) return 'starting…';
  if (stage === 'done') return 'finishing…'; // the engine's last event, just before "finished"
  if (status.done !== undefined && status.total !== undefined && status.total > 0) {
    if (stage === 'reviewing') return `reviewing ${status.done}/${status.total} files…`;
    return `${stage} ${status.done}/${status.total}…`;
  }
  return `${stage}…`;
}

export function formatTokens(tokens: number): string {
  return tokens.toLocaleString('en-US');
}

/** "$0.0042", "$0.50"; "unpriced" when no cost is known (a model without a price: never
 *  "$0.0000"), as the server says it (server/redline/money.py). */
export function formatCost(costUsd: number | null | undefined): string {
  if (costUsd === undefined || costUsd === null) return 'unpriced';
  return costUsd < 0.01 ? `$${costUsd.toFixed(4)}` : `$${costUsd.toFixed(2)}`;
}

function spend(status: ReviewStatus): string[] {
  if (status.tokens === undefined || status.tokens <= 0) return []; // no model called yet
  return [`${formatTokens(status.tokens)} tokens`, formatCost(status.costUsd)];
}

export interface StatusBarView {
  text: string;
  tooltip: string;
  /** What a click does: focus the sidebar, offer to cancel the running review, or (no server)
   *  show the output with what went wrong. */
  click: 'focus' | 'cancel' | 'output';
}

export function statusBarView(status: ReviewStatus): StatusBarView {
  switch (status.phase) {
    case 'running':
      return {
        text: `$(sync~spin) Redline: ${runningText(status)}`,
        tooltip: [`Redline is reviewing: ${status.request ?? ''}`.trim(), status.message, ...spend(status), 'Click to cancel.']
          .filter((s) => !!s).join('\n'),
        click: 'cancel',
      };
    case 'finished': {
      const problems = problemsView(status);
      return {
        text: `Redline: ${problems.text}`,
        tooltip: [status.label ?? status.request, ...problems.tooltip, ...spend(status), 'Click to show the findings.']
          .filter((s) => !!s).join('\n'),
        click: 'focus',
      };
    }
    case 'failed':
      return {
        text: '$(error) Redline: failed',
        tooltip: `The review failed: ${status.error ?? 'unknown error'}\nClick to show the findings.`,
        click: 'focus',
      };
    case 'cancelled':
      return {
        text: '$(circle-slash) Redline: cancelled',
        tooltip: `The review was cancelled${status.reason ? `: ${status.reason}` : ''}.`,
        click: 'focus',
      };
    case 'noServer':
      // Stays on screen after the notification is gone: nothing works until this is fixed.
      return {
        text: '$(debug-disconnect) Redline: no server',
        tooltip: `${status.error ?? 'The Redline server is not running.'}\nClick to show the output.`,
        click: 'output',
      };
    default:
      return { text: '$(eye) Redline', tooltip: 'Redline: no review yet. Click to open the sidebar.', click: 'focus' };
  }
}

/** The findings view's description line: scope, counts, tokens and cost ("" when no review).
 *  `counts` are of the findings listed; while a review runs, of that review's findings only. */
export function viewDescription(status: ReviewStatus, scopeLabel: string | null, counts: SeverityCounts): string {
  const listed = total(counts);
  const findings = listed === 0 ? 'no findings' : `${plural(listed, 'finding')} (${countsText(counts)})`;
  if (status.phase === 'noServer') return 'the Redline server is not running';
  if (status.phase === 'running') {
    return [`reviewing ${status.request ?? ''}`.trim(), `${listed} so far`, ...spend(status)].join(' · ');
  }
  if (status.phase === 'failed' || status.phase === 'cancelled') {
    // This review produced no list: say which one ended, and that the list is the last one's.
    const ended = `${status.request ?? 'the review'} ${status.phase}`;
    return scopeLabel && listed > 0 ? `${ended} · showing ${scopeLabel} · ${findings}` : ended;
  }
  const scope = status.label ?? scopeLabel;
  if (!scope && status.phase === 'idle' && listed === 0) return '';
  return [scope ?? 'last review', findings, ...spend(status)].join(' · ');
}
