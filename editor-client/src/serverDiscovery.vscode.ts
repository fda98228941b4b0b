// The VS Code side of server discovery: reads the settings (user scope only) and reports a
// missing server with a button to install it from the bundled wheel (install.vscode.ts) and one
// to the setting.
import * as vscode from 'vscode';
import { discoverServer, nodeFsProbe } from './serverDiscovery';

export type FoundServer = { command: string; args: string[]; source: string };

export function isRemote(): boolean {
  return vscode.env.remoteName !== undefined;
}

export function workspaceFolderPaths(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

/** The server to start, or why there is none (not shown yet: the caller offers the fixes). */
export function findServer(output: vscode.OutputChannel): FoundServer | { problem: string } {
  const config = vscode.workspace.getConfiguration('redline');
  const result = discoverServer({
    serverPath: config.inspect<string>('server.path') ?? {},
    serverArgs: config.inspect<string[]>('server.args') ?? {},
    pathEnv: process.env.PATH,
    workspaceFolders: workspaceFolderPaths(),
    platform: process.platform,
    home: process.env.HOME ?? process.env.USERPROFILE,
    fs: nodeFsProbe(),
    remote: isRemote(),
  });
  for (const note of result.notes) output.appendLine(note);
  if (result.kind === 'found') return result;
  output.appendLine(result.message);
  return { problem: result.message };
}

export async function openServerSetting(): Promise<void> {
  // Remote windows read machine-scoped settings from the Remote settings file.
  const remote = isRemote();
  const command = remote ? 'workbench.action.openRemoteSettings' : 'workbench.action.openSettings';
  await vscode.commands.executeCommand(command, remote ? undefined : 'redline.server.path');
}

/** The server's arguments as the user set them (user scope only), for a server found by the
 *  installer rather than on PATH. */
export function serverArgs(): string[] {
  const inspect = vscode.workspace.getConfiguration('redline').inspect<string[]>('server.args');
  const value = inspect?.globalValue ?? inspect?.defaultValue ?? ['lsp'];
  return Array.isArray(value) ? value.map(String) : ['lsp'];
}
