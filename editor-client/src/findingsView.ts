// The Findings tree view: an adapter from the pure model (findingsModel.ts) to VS Code.
import * as vscode from 'vscode';
import { FindingNode, FindingsStore, GroupBy, GroupNode, buildTree, countFindings } from './findingsModel';
import { ReviewStatus, viewDescription } from './statusText';
import { keptRuns, runsText, shownRuns } from './runs';

export type Node = GroupNode | FindingNode;

/** contextValue of a finding row: "finding.fixable" gets the Apply Fix menu entry. */
export function contextValue(node: FindingNode): string {
  return node.fixable ? 'finding.fixable' : 'finding';
}

export class FindingsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<Node>;
  private groupBy: GroupBy = 'file';
  private groups: GroupNode[] = [];

  constructor(private readonly store: FindingsStore) {
    this.view = vscode.window.createTreeView('redline.findings', { treeDataProvider: this, showCollapseAll: true });
    void vscode.commands.executeCommand('setContext', 'redlineClient.groupBy', this.groupBy);
  }

  setGroupBy(groupBy: GroupBy): void {
    this.groupBy = groupBy;
    void vscode.commands.executeCommand('setContext', 'redlineClient.groupBy', groupBy);
    this.refresh();
  }

  refresh(): void {
    this.groups = buildTree(this.store.payloads(), this.groupBy);
    this.changed.fire(undefined);
  }

  /** The line under the view's title: scope, counts, tokens and cost. */
  describe(status: ReviewStatus): void {
    // While a review runs, the list may still be the previous review's: count its own findings.
    const payloads = this.store.payloads().filter((p) => status.phase !== 'running' || p.taskId === status.taskId);
    const all = this.store.payloads();
    const runs = runsText(keptRuns(all), shownRuns(all));
    const line = viewDescription(status, this.store.scopeLabel(), countFindings(payloads));
    const text = runs && line ? `${runs} · ${line}` : line;
    this.view.description = text || undefined;
    // A single view's description is hidden where VS Code merges its header into the container's
    // title: the same line also goes above the findings (not when the tree is empty, where the
    // welcome view's buttons show instead).
    this.view.message = this.store.isEmpty() ? undefined : text || undefined;
  }

  getChildren(node?: Node): Node[] {
    if (node === undefined) return this.groups;
    return node.kind === 'group' ? node.children : [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'group') {
      const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = node.key;
      item.description = node.description;
      item.tooltip = node.tooltip;
      item.contextValue = 'group';
      if (node.uri) {
        item.resourceUri = vscode.Uri.parse(node.uri);
        item.iconPath = vscode.ThemeIcon.File;
      } else if (node.severity) {
        item.iconPath = icon(node.children[0]);
      }
      return item;
    }
    const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
    item.id = node.key;
    item.description = node.description;
    item.tooltip = node.tooltip;
    item.iconPath = icon(node);
    item.contextValue = contextValue(node);
    item.command = { command: 'redlineClient.openFinding', title: 'Open', arguments: [node] };
    return item;
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}

function icon(node: FindingNode | undefined): vscode.ThemeIcon | undefined {
  return node ? new vscode.ThemeIcon(node.icon.id, new vscode.ThemeColor(node.icon.color)) : undefined;
}

/** Open the finding's file at its line (the first line for an unanchored finding). */
export async function openFinding(node: FindingNode): Promise<void> {
  const line = Math.max(0, (node.finding.line ?? 1) - 1);
  const end = Math.max(line, (node.finding.end_line ?? node.finding.line ?? 1) - 1);
  const selection = new vscode.Range(line, 0, end, 0);
  // In the editor group that already shows the file, else the active text editor's: never the
  // group of a focused webview (the report), which the file would then cover.
  const shown = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === node.uri);
  const viewColumn = shown?.viewColumn ?? vscode.window.activeTextEditor?.viewColumn ?? vscode.ViewColumn.One;
  await vscode.window.showTextDocument(vscode.Uri.parse(node.uri), { selection, preview: true, viewColumn });
}
