// Quick picks and input boxes that turn a choice into `redline.review` arguments.
import * as vscode from 'vscode';
import { RedlineClient } from './client';
import { RefsResult, REQUESTS, ReviewArgs } from './protocol';
import { branchArgs, commitArgs, parsePullRequest, prArgs, rangeArgs, rangeError, stagedArgs, uncommittedArgs } from './args';

async function refs(client: RedlineClient, folder: string | undefined): Promise<RefsResult | undefined> {
  return client.request<RefsResult>(REQUESTS.refs, folder ? { folder, limit: 50 } : { limit: 50 });
}

export async function pickBranch(client: RedlineClient, folder: string | undefined): Promise<ReviewArgs | undefined> {
  const result = await refs(client, folder);
  if (!result) return undefined;
  const items = result.branches
    .filter((b) => !b.current)
    .map((b) => ({
      label: b.name,
      description: [b.remote ? 'remote' : 'local', b.name === result.defaultBase ? 'default base' : ''].filter((s) => s).join(' · '),
    }));
  if (items.length === 0) {
    void vscode.window.showInformationMessage('Redline: there is no other branch to review against.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(items, {
    title: `Review ${result.current ?? 'the current branch'} against…`,
    placeHolder: 'Base branch',
    matchOnDescription: true,
    // Opened after a request: focus coming back to a webview (the report panel) meanwhile would
    // close it at once.
    ignoreFocusOut: true,
  });
  return picked ? branchArgs(picked.label, folder) : undefined;
}

export async function pickCommit(client: RedlineClient, folder: string | undefined): Promise<ReviewArgs | undefined> {
  const result = await refs(client, folder);
  if (!result) return undefined;
  const items = result.commits.map((c) => ({
    label: `${c.short} ${c.subject}`,
    description: c.author,
    detail: c.date,
    sha: c.sha,
  }));
  if (items.length === 0) {
    void vscode.window.showInformationMessage('Redline: there is no commit to review.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Review Commit…', placeHolder: 'Commit', matchOnDescription: true, ignoreFocusOut: true,
  });
  return picked ? commitArgs(picked.sha, folder) : undefined;
}

export async function askPullRequest(folder: string | undefined): Promise<ReviewArgs | undefined> {
  const value = await vscode.window.showInputBox({
    title: 'Review Pull Request…',
    prompt: 'Pull request number or URL',
    placeHolder: '12 or https://github.com/OWNER/REPO/pull/12',
    ignoreFocusOut: true,
    validateInput: (text) => {
      const parsed = parsePullRequest(text);
      return parsed.ok ? undefined : parsed.error;
    },
  });
  if (value === undefined) return undefined;
  const parsed = parsePullRequest(value);
  return parsed.ok ? prArgs(parsed.value, folder) : undefined;
}

export async function askRange(folder: string | undefined, title = 'Range…'): Promise<ReviewArgs | undefined> {
  const value = await vscode.window.showInputBox({
    title,
    prompt: 'A..B (the commits of B not in A), or A...B (B against its merge-base with A)',
    placeHolder: 'main..HEAD',
    ignoreFocusOut: true,
    validateInput: rangeError,
  });
  return value === undefined ? undefined : rangeArgs(value, folder);
}

/** Every scope a review can take, in one quick pick (the debate's "what to argue about"). */
export async function pickScope(client: RedlineClient, folder: string | undefined, title: string): Promise<ReviewArgs | undefined> {
  const base = vscode.workspace.getConfiguration('redline').get<string>('baseBranch');
  const choices: { label: string; detail: string; pick: () => Promise<ReviewArgs | undefined> }[] = [
    { label: 'Uncommitted changes', detail: 'staged and unstaged', pick: async () => uncommittedArgs(folder) },
    { label: 'Staged changes', detail: 'what the next commit holds', pick: async () => stagedArgs(folder) },
    { label: 'Current branch', detail: base?.trim() ? `against ${base.trim()}` : 'against the default base', pick: async () => branchArgs(base, folder) },
    { label: 'Branch against…', detail: 'pick the base branch', pick: () => pickBranch(client, folder) },
    { label: 'Commit…', detail: 'pick one commit', pick: () => pickCommit(client, folder) },
    { label: 'Range…', detail: 'A..B or A...B', pick: () => askRange(folder, title) },
    { label: 'Pull request…', detail: 'number or URL', pick: () => askPullRequest(folder) },
  ];
  const picked = await vscode.window.showQuickPick(choices, { title, placeHolder: 'What should the debaters argue about?', ignoreFocusOut: true });
  return picked ? picked.pick() : undefined;
}
