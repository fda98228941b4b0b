// The shapes the Redline language server sends and answers (docs/ARCHITECTURE.md, "LSP surface").
// Types only: no runtime code, so the pure modules and their tests can import it.

export type Severity = 'Critical' | 'High' | 'Medium' | 'Low' | 'Info';

export const SEVERITIES: readonly Severity[] = ['Critical', 'High', 'Medium', 'Low', 'Info'];

/** A finding as `redline/findings` carries it: the server's Finding JSON plus its current place. */
export interface Finding {
  id: string;
  file: string;
  line: number | null; // 1-based current line; null when unanchored
  end_line?: number | null;
  severity: Severity;
  category: string;
  title: string;
  comment: string;
  existing_code?: string;
  improved_code?: string | null;
  confidence?: number;
  sources?: string[]; // ["model:gpt-4o-mini"], ["ruff:B006"]
  rule_id?: string | null;
  verification?: { verdict: string; evidence?: string; model?: string | null } | null;
  stale?: boolean;
  unanchored?: boolean;
  /** The kept runs that found it ("review", "debate", "ask"). */
  runs?: RunKind[];
}

export type RunKind = 'review' | 'debate' | 'ask';

/** One kept run of a folder: the last review, debate and ask each keep their findings. */
export interface RunInfo {
  kind: RunKind;
  taskId: string;
  label: string | null;
  findings: number;
}

export interface FindingsFile {
  uri: string;
  path: string;
  findings: Finding[];
}

/** `redline/findings`: one workspace folder's list. `full` (or absent, from an older server):
 *  the whole current list, replacing what was shown. `full: false`: only the files whose
 *  findings changed since the last notification (an edit moved them); each entry replaces that
 *  file's findings, and an entry with no findings removes the file. */
export interface FindingsPayload {
  folder: string;
  taskId: string | null;
  scopeLabel: string | null;
  full?: boolean;
  /** The kept runs (absent from an older server). */
  runs?: RunInfo[];
  /** The kinds shown (`redline.showRuns`); null or absent: all. */
  shownRuns?: RunKind[] | null;
  files: FindingsFile[];
}

export type ReviewStateName = 'started' | 'stage' | 'progress' | 'finished' | 'cancelled' | 'failed';

/** `redline/reviewState`. */
export interface ReviewStateEvent {
  folder: string;
  state: ReviewStateName;
  taskId?: string;
  scope?: string;
  request?: string; // "branch against main", as the server describes it
  elapsed?: number;
  stage?: string;
  message?: string;
  done?: number;
  total?: number;
  tokens?: number;
  costUsd?: number;
  counts?: Partial<Record<Severity, number>>;
  findings?: number;
  summary?: string | null;
  label?: string; // the finished review's scope label
  reason?: string;
  error?: string;
}

/** `redline.review` arguments. */
export interface ReviewArgs {
  scope: 'uncommitted' | 'staged' | 'branch' | 'commit' | 'range' | 'pr';
  base?: string;
  ref?: string;
  range?: string;
  pr?: string;
  folder?: string;
}

export interface ReportResult {
  taskId: string | null;
  scopeLabel: string | null;
  markdown: string | null;
  running: boolean;
}

export interface RefsResult {
  current: string | null;
  defaultBase: string | null;
  branches: { name: string; remote: boolean; current: boolean }[];
  commits: { sha: string; short: string; subject: string; author: string; date: string }[];
}

export interface UserConfigResult {
  path: string;
  exists: boolean;
  created: boolean;
}

/** `redline.debate` arguments: a review scope plus the rounds (absent: the server's default). */
export interface DebateArgs extends ReviewArgs {
  rounds?: number;
}

export interface DebaterInfo {
  name: string;
  label: string;
  model: string;
}

export type TurnKind = 'turn' | 'pass' | 'skipped' | 'stopped';

/** The `event` field of `redline/debate` and its fields (server/redline/debate/events.py). */
export type DebateEventBody =
  | { event: 'started'; debaters: DebaterInfo[]; rounds: number; scopeLabel: string }
  | { event: 'turnStarted'; round: number; speaker: string; label: string; model: string }
  | { event: 'delta'; round: number; speaker: string; text: string }
  | {
    event: 'turnFinished'; round: number; speaker: string; label: string; kind: TurnKind; text: string;
    note?: string | null; tokens?: number; latencyMs?: number; toolCalls?: number;
  }
  | { event: 'interjection'; round: number; text: string }
  | { event: 'note'; text: string }
  | { event: 'stopped'; reason: string; text: string }
  | { event: 'summaries'; positions: { label: string; text: string }[] }
  | { event: 'summary'; markdown: string; failed: boolean }
  | { event: 'final'; findings: number; counts?: Partial<Record<Severity, number>>; tokens?: number; costUsd?: number | null };

/** `redline/debate`: one event of a running debate. */
export type DebateNotification = DebateEventBody & { folder: string; taskId: string };

export const REQUESTS = {
  report: 'redline/report',
  refs: 'redline/refs',
  userConfig: 'redline/userConfig',
} as const;

export const NOTIFICATIONS = {
  findings: 'redline/findings',
  reviewState: 'redline/reviewState',
  debate: 'redline/debate',
} as const;

/** The server's debate commands (`workspace/executeCommand`). */
export const DEBATE_COMMANDS = {
  start: 'redline.debate',
  interject: 'redline.debateInterject',
  stop: 'redline.debateStop',
} as const;
