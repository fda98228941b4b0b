// Every palette, title-bar and context-menu command of the extension (ids `redlineClient.*`; the
// server's own `redline.*` commands are registered by vscode-languageclient).
import * as vscode from 'vscode';
import { RedlineClient } from './client';
import { Session } from './session';
import { FindingsView, openFinding } from './findingsView';
import { FindingNode } from './findingsModel';
import { DEBATE_COMMANDS, ReviewArgs } from './protocol';
import {
  askArgs, branchArgs, chooseFixAction, chooseFolder, debateArgs, dismissArgs, findingClipboardText, parseRounds, stagedArgs, uncommittedArgs,
} from './args';
import { askPullRequest, pickBranch, pickCommit, pickScope } from './pickers';
import { DebateView } from './debateView';
import { canSteer } from './debateModel';
import { exportReport } from './export';
import { openUserConfig } from './userConfig';

export interface CommandDeps {
  client: RedlineClient;
  session: Session;
  tree: FindingsView;
  debate: DebateView;
  output: vscode.OutputChannel;
  onStatusBarClick(): Promise<void>;
}

function currentFolder(): string | undefined {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.toString());
  return chooseFolder(vscode.window.activeTextEditor?.document.uri.toString(), folders);
}

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const { client, session, tree, output, debate } = deps;

  const review = async (args: ReviewArgs | undefined) => {
    if (!args) return;
    const started = await client.command<{ taskId: string }>('redline.review', args);
    if (started) output.appendLine(`Review ${started.taskId} started: ${JSON.stringify(args)}`);
  };

  const register = (id: string, fn: (...args: never[]) => unknown) =>
    vscode.commands.registerCommand(`redlineClient.${id}`, fn as (...args: unknown[]) => unknown);

  return [
    register('reviewUncommitted', () => review(uncommittedArgs(currentFolder()))),
    register('reviewStaged', () => review(stagedArgs(currentFolder()))),
    register('reviewBranch', () => {
      const base = vscode.workspace.getConfiguration('redline').get<string>('baseBranch');
      return review(branchArgs(base, currentFolder()));
    }),
    register('reviewBranchAgainst', async () => review(await pickBranch(client, currentFolder()))),
    register('reviewCommit', async () => review(await pickCommit(client, currentFolder()))),
    register('reviewPullRequest', async () => review(await askPullRequest(currentFolder()))),
    register('ask', async () => {
      const request = await vscode.window.showInputBox({
        title: 'Ask Redline…',
        prompt: 'What should Redline review?',
        placeHolder: 'e.g. review the error handling in the last two commits',
        ignoreFocusOut: true,
        validateInput: (text) => (text.trim() ? undefined : 'Say what to review.'),
      });
      if (request === undefined) return;
      await client.command('redline.ask', askArgs(request, currentFolder()));
    }),
    register('cancel', () => client.command('redline.cancel', session.status.taskId ? { taskId: session.status.taskId } : {})),
    register('rerun', () => client.command('redline.rerun', {})),
    register('clear', () => client.command('redline.clear', {})),
    register('export', () => exportReport(client, currentFolder())),
    register('openUserConfig', () => openUserConfig(client)),
    register('showOutput', () => output.show()),
    register('restartServer', async () => {
      session.reset();
      await client.restart();
    }),
    register('showReport', () => session.showReport()),
    register('showRuns', () => session.chooseRuns()),
    register('groupByFile', () => tree.setGroupBy('file')),
    register('groupBySeverity', () => tree.setGroupBy('severity')),
    register('openFinding', (node: FindingNode) => openFinding(node)),
    register('statusBarClick', () => deps.onStatusBarClick()),
    register('copy', async (node: FindingNode) => {
      if (!node || node.kind !== 'finding') return;
      await vscode.env.clipboard.writeText(findingClipboardText(node.finding));
      vscode.window.setStatusBarMessage('Redline: finding copied', 2000);
    }),
    register('dismiss', (node: FindingNode) => dismiss(client, node, false)),
    // Every identical finding in the file (same code, category and rule), now and later.
    register('dismissAll', (node: FindingNode) => dismiss(client, node, true)),
    register('applyFix', (node: FindingNode) => applyFix(node)),
    register('startDebate', () => startDebate(client, debate, output)),
    register('interjectDebate', async () => {
      if (!canSteer(debate.state)) {
        void vscode.window.showInformationMessage('Redline: no debate is running.');
        return;
      }
      const text = await vscode.window.showInputBox({
        title: 'Interject in the Debate',
        prompt: 'Your words go into the transcript before the next turn.',
        ignoreFocusOut: true,
        validateInput: (t) => (t.trim() ? undefined : 'Say something, or press Escape.'),
      });
      if (text !== undefined) await debate.interject(text);
    }),
    register('stopDebate', () => debate.stop()),
    register('showDebate', () => debate.reveal()),
    register('exportDebate', () => debate.exportMarkdown()),
  ];
}

/** Dismiss… / Dismiss All Like This…: a reason, then `redline.dismiss`. */
async function dismiss(client: RedlineClient, node: FindingNode, all: boolean): Promise<void> {
  if (!node || node.kind !== 'finding') return;
  const reason = await vscode.window.showInputBox({
    title: all ? `Dismiss All Like “${node.finding.title}”` : `Dismiss “${node.finding.title}”`,
    prompt: all
      ? 'Why is no finding like this one in this file a problem? (recorded in .redline/dismissed.toml)'
      : 'Why is this not a problem? (recorded in .redline/dismissed.toml)',
    placeHolder: 'e.g. the input is validated by the caller',
    ignoreFocusOut: true,
  });
  if (reason === undefined) return;
  await client.command('redline.dismiss', dismissArgs(node.finding.id, reason, all));
}

/** Start Debate…: a scope, the rounds (empty: the server's default), then `redline.debate`; the
 *  panel opens on the server's first event. */
async function startDebate(client: RedlineClient, debate: DebateView, output: vscode.OutputChannel): Promise<void> {
  const folder = currentFolder();
  const scope = await pickScope(client, folder, 'Start Debate…');
  if (!scope) return;
  const rounds = await vscode.window.showInputBox({
    title: 'Start Debate…',
    prompt: 'How many rounds? Empty: your configured default ([debate] rounds, 3 unless set).',
    placeHolder: 'default',
    ignoreFocusOut: true,
    validateInput: (text) => {
      const parsed = parseRounds(text);
      return parsed.ok ? undefined : parsed.error;
    },
  });
  if (rounds === undefined) return;
  const parsed = parseRounds(rounds);
  if (!parsed.ok) return;
  const args = debateArgs(scope, parsed.rounds);
  const started = await client.command<{ taskId: string }>(DEBATE_COMMANDS.start, args);
  if (!started) return;
  output.appendLine(`Debate ${started.taskId} started: ${JSON.stringify(args)}`);
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.toString());
  debate.begin(started.taskId, folder ?? folders[0] ?? '');
}

/** Apply the quick fix the server offers for this finding: the same code action the light bulb
 *  shows, found among the actions at the finding's range by its `redline.fixApplied [uri, id]`. */
async function applyFix(node: FindingNode): Promise<void> {
  if (!node || node.kind !== 'finding') return;
  await openFinding(node); // the server computes actions for open documents only
  const uri = vscode.Uri.parse(node.uri);
  const line = Math.max(0, (node.finding.line ?? 1) - 1);
  const end = Math.max(line, (node.finding.end_line ?? node.finding.line ?? 1) - 1);
  // Whole lines: VS Code names the diagnostics the range touches, and the server answers for
  // those only (server/redline/lsp/actions.py); the finding's squiggle may start past column 0.
  const doc = await vscode.workspace.openTextDocument(uri);
  const last = doc.lineAt(Math.min(end, doc.lineCount - 1));
  const actions = (await vscode.commands.executeCommand<vscode.CodeAction[]>(
    'vscode.executeCodeActionProvider', uri, new vscode.Range(line, 0, last.lineNumber, last.range.end.character),
    vscode.CodeActionKind.QuickFix.value,
  )) ?? [];
  const choice = chooseFixAction(actions, node.finding.id);
  if (choice.kind === 'none') {
    void vscode.window.showWarningMessage('Redline: no fix is offered for this finding any more (its code changed?).');
    return;
  }
  if (choice.kind === 'suggested') {
    void vscode.window.showWarningMessage('Redline: the fix cannot be applied automatically here; showing the suggested code.');
  }
  const action = choice.action;
  if (action.edit && !(await vscode.workspace.applyEdit(action.edit))) {
    void vscode.window.showErrorMessage('Redline: the fix could not be applied (the file changed?).');
    return;
  }
  if (action.command) {
    await vscode.commands.executeCommand(action.command.command, ...(action.command.arguments ?? []));
  }
}
