// Which runs' findings are shown: the last review, debate and ask each keep theirs (the server
// keeps them, lsp/folders.py), shown together or one at a time ("Redline: Show Findings Of…",
// `redline.showRuns`). Pure (no `vscode`): the choices and the texts are unit-tested.
import { Finding, FindingsPayload, RunInfo, RunKind } from './protocol';

export const RUN_NAMES: Record<RunKind, string> = { review: 'Review', debate: 'Debate', ask: 'Ask' };

export interface RunChoice {
  label: string;
  description: string;
  /** The `runs` argument of `redline.showRuns`. */
  runs: RunKind[] | 'all';
  picked: boolean;
}

function count(n: number, what: string): string {
  return `${n} ${n === 1 ? what : `${what}s`}`;
}

/** The kept runs of every folder (a kind once, with the findings of all folders). */
export function keptRuns(payloads: Iterable<FindingsPayload>): RunInfo[] {
  const byKind = new Map<RunKind, RunInfo>();
  for (const p of payloads) {
    for (const run of p.runs ?? []) {
      const seen = byKind.get(run.kind);
      byKind.set(run.kind, seen ? { ...seen, findings: seen.findings + run.findings } : { ...run });
    }
  }
  return (['review', 'debate', 'ask'] as RunKind[]).filter((k) => byKind.has(k)).map((k) => byKind.get(k)!);
}

/** The kinds shown, or null when every run is. */
export function shownRuns(payloads: Iterable<FindingsPayload>): RunKind[] | null {
  for (const p of payloads) if (p.shownRuns) return p.shownRuns;
  return null;
}

/** The quick pick: every run together, or one run alone; the current choice is marked. */
export function runChoices(runs: RunInfo[], shown: RunKind[] | null): RunChoice[] {
  const total = runs.reduce((n, r) => n + r.findings, 0);
  const all: RunChoice = {
    label: 'All runs together',
    description: `${runs.map((r) => RUN_NAMES[r.kind]).join(' + ')} · ${count(total, 'finding')}`,
    runs: 'all',
    picked: shown === null,
  };
  return [
    all,
    ...runs.map((r) => ({
      label: `${RUN_NAMES[r.kind]} only`,
      description: [r.label ?? '', count(r.findings, r.kind === 'debate' ? 'action item' : 'finding')].filter((s) => s).join(' · '),
      runs: [r.kind],
      picked: shown !== null && shown.length === 1 && shown[0] === r.kind,
    })),
  ];
}

/** What the sidebar's line says of the runs: nothing with one run, else which are shown. */
export function runsText(runs: RunInfo[], shown: RunKind[] | null): string {
  if (runs.length < 2 && shown === null) return '';
  const names = (shown ?? runs.map((r) => r.kind)).map((k) => RUN_NAMES[k].toLowerCase());
  return shown === null ? `${names.join(' + ')}` : `${names.join(' + ')} only`;
}

/** A row's run tag ("debate", "review, debate") when more than one run is kept. */
export function runTag(finding: Finding, runs: RunInfo[]): string {
  if (runs.length < 2 || !finding.runs || finding.runs.length === 0) return '';
  return finding.runs.join(', ');
}
