// The sidebar's tree, built from `redline/findings` payloads. Pure: no `vscode` import, so the
// tree a user sees is unit-tested with real-looking payloads (test/findingsModel.test.ts).
import { Finding, FindingsPayload, SEVERITIES, Severity } from './protocol';
import { runTag } from './runs';

export type GroupBy = 'file' | 'severity';

export interface FindingNode {
  kind: 'finding';
  key: string;
  finding: Finding;
  folder: string;
  uri: string;
  path: string;
  label: string;
  description: string;
  tooltip: string;
  icon: SeverityIcon;
  /** The server may offer a quick fix: the row gets the "Apply Fix" context menu entry. */
  fixable: boolean;
}

export interface GroupNode {
  kind: 'group';
  key: string;
  label: string;
  description: string;
  /** The whole label and what the group holds: a narrow sidebar truncates the label. */
  tooltip: string;
  uri?: string; // grouped by file: the file, for its icon
  severity?: Severity;
  children: FindingNode[];
}

export interface SeverityIcon {
  id: string; // a codicon name
  color: string; // a theme color id
}

const ICONS: Record<Severity, SeverityIcon> = {
  Critical: { id: 'flame', color: 'errorForeground' },
  High: { id: 'error', color: 'errorForeground' },
  Medium: { id: 'warning', color: 'editorWarning.foreground' },
  Low: { id: 'info', color: 'editorInfo.foreground' },
  Info: { id: 'lightbulb', color: 'editorInfo.foreground' },
};

export function severityIcon(severity: Severity): SeverityIcon {
  return ICONS[severity] ?? ICONS.Info;
}

/** "model", "ruff", "model, bandit": where a finding came from, without model names or rule ids
 *  (the rule id is in the tooltip). */
export function sourceLabel(finding: Finding): string {
  const kinds = (finding.sources ?? []).map((s) => s.split(':')[0].trim()).filter((s) => s !== '');
  const unique = [...new Set(kinds)];
  return unique.length > 0 ? unique.join(', ') : 'redline';
}

export function findingDescription(finding: Finding): string {
  const place = finding.unanchored || finding.line === null || finding.line === undefined
    ? 'unanchored'
    : `line ${finding.line}`;
  const stale = finding.stale ? ' · may be stale' : '';
  return `${place} · ${sourceLabel(finding)}${stale}`;
}

export function findingTooltip(finding: Finding): string {
  // Plain text on purpose: the comment is model output about the attacker's code, never Markdown.
  // The whole title and place: a narrow sidebar truncates the row's label and description.
  const rule = finding.rule_id ? ` (${finding.rule_id})` : '';
  return `${finding.severity}: ${finding.title}${rule}\n${finding.file} · ${findingDescription(finding)}\n\n${finding.comment}`;
}

function groupTooltip(label: string, children: FindingNode[], bySeverity: boolean): string {
  if (bySeverity) {
    const files = [...new Set(children.map((c) => c.path))];
    const where = files.length === 1 ? files[0] : `${files.length} files`;
    return `${label} — ${countText(children.length)} in ${where}`;
  }
  const parts = SEVERITIES.map((s) => [s, children.filter((c) => c.finding.severity === s).length] as const)
    .filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`);
  return `${label} — ${countText(children.length)}: ${parts.join(', ')}`;
}

function severityRank(severity: Severity): number {
  const index = SEVERITIES.indexOf(severity);
  return index < 0 ? SEVERITIES.length : index;
}

function byLine(a: FindingNode, b: FindingNode): number {
  // Anchored findings in line order, unanchored ones (no line) after them.
  const la = a.finding.line ?? Number.MAX_SAFE_INTEGER;
  const lb = b.finding.line ?? Number.MAX_SAFE_INTEGER;
  return la - lb || severityRank(a.finding.severity) - severityRank(b.finding.severity);
}

function countText(n: number): string {
  return n === 1 ? '1 finding' : `${n} findings`;
}

/** Every finding of every folder's latest payload, as rows. */
export function findingNodes(payloads: Iterable<FindingsPayload>): FindingNode[] {
  const nodes: FindingNode[] = [];
  for (const payload of payloads) {
    const runs = payload.runs ?? [];
    for (const file of payload.files) {
      for (const finding of file.findings) {
        // Which run found it, when the list holds several (a review's and a debate's).
        const tag = runTag(finding, runs);
        nodes.push({
          kind: 'finding',
          key: `${payload.folder}#${finding.id}`,
          finding,
          folder: payload.folder,
          uri: file.uri,
          path: file.path || finding.file,
          label: finding.title,
          description: tag ? `${findingDescription(finding)} · ${tag}` : findingDescription(finding),
          tooltip: tag ? `${findingTooltip(finding)}\n\nFound by the last ${tag}.` : findingTooltip(finding),
          icon: severityIcon(finding.severity),
          // improved_code "" is a deletion, still a fix; a stale finding's fix no longer fits.
          fixable: finding.improved_code !== null && finding.improved_code !== undefined &&
            !finding.stale && !finding.unanchored,
        });
      }
    }
  }
  return nodes;
}

/** The tree: files (in path order) or severities (most serious first), each with its rows. */
export function buildTree(payloads: Iterable<FindingsPayload>, groupBy: GroupBy): GroupNode[] {
  const nodes = findingNodes(payloads);
  if (groupBy === 'severity') {
    return SEVERITIES.map((severity) => {
      const children = nodes
        .filter((n) => n.finding.severity === severity)
        .sort((a, b) => a.path.localeCompare(b.path) || byLine(a, b));
      return {
        kind: 'group' as const,
        key: `severity:${severity}`,
        label: severity,
        description: countText(children.length),
        tooltip: groupTooltip(severity, children, true),
        severity,
        children,
      };
    }).filter((g) => g.children.length > 0);
  }
  const byUri = new Map<string, GroupNode>();
  for (const node of nodes) {
    let group = byUri.get(node.uri);
    if (group === undefined) {
      group = { kind: 'group', key: `file:${node.uri}`, label: node.path, description: '', tooltip: '', uri: node.uri, children: [] };
      byUri.set(node.uri, group);
    }
    group.children.push(node);
  }
  const groups = [...byUri.values()].sort((a, b) => a.label.localeCompare(b.label));
  for (const group of groups) {
    group.children.sort(byLine);
    group.description = countText(group.children.length);
    group.tooltip = groupTooltip(group.label, group.children, false);
  }
  return groups;
}

export type SeverityCounts = Record<Severity, number>;

export function emptyCounts(): SeverityCounts {
  return { Critical: 0, High: 0, Medium: 0, Low: 0, Info: 0 };
}

/** The findings listed, by severity; `inProblems`: only those with a diagnostic (anchored to a
 *  line), which is what VS Code's Problems panel holds. */
export function countFindings(payloads: Iterable<FindingsPayload>, inProblems = false): SeverityCounts {
  const counts = emptyCounts();
  for (const node of findingNodes(payloads)) {
    if (inProblems && (node.finding.unanchored || node.finding.line === null || node.finding.line === undefined)) continue;
    if (node.finding.severity in counts) counts[node.finding.severity] += 1;
  }
  return counts;
}

/** Each workspace folder's current list: a whole list replaces the folder's, a partial one
 *  (`full: false`) replaces only the files it names and removes those it sends empty. */
export class FindingsStore {
  private readonly byFolder = new Map<string, FindingsPayload>();

  update(payload: FindingsPayload): void {
    const shown = this.byFolder.get(payload.folder);
    const base = payload.full === false && shown !== undefined ? shown.files : [];
    const files = new Map(base.map((f) => [f.uri, f]));
    for (const file of payload.files) files.set(file.uri, file);
    const kept = [...files.values()].filter((f) => f.findings.length > 0);
    this.byFolder.set(payload.folder, { ...payload, full: true, files: kept });
  }

  clear(): void {
    this.byFolder.clear();
  }

  payloads(): FindingsPayload[] {
    return [...this.byFolder.values()];
  }

  isEmpty(): boolean {
    return this.payloads().every((p) => p.files.every((f) => f.findings.length === 0));
  }

  scopeLabel(): string | null {
    return this.payloads().map((p) => p.scopeLabel).find((l) => !!l) ?? null;
  }

  find(folder: string, id: string): FindingNode | undefined {
    return findingNodes(this.payloads()).find((n) => n.folder === folder && n.finding.id === id);
  }
}
