// The VS Code side of server discovery: reads the settings (user scope only) and reports a
// missing server with install instructions and a button to the setting.
import * as vscode from 'vscode';
import { discoverServer, nodeFsProbe } from './serverDiscovery';

export type FoundServer = { command: string; args: string[]; source: string };

/** The server to start, or (shown to the user already) why there is none. */
export function findServer(output: vscode.OutputChannel): FoundServer | { problem: string } {
  const remote = vscode.env.remoteName !== undefined;
  const config = vscode.workspace.getConfiguration('redline');
  const result = discoverServer({
    serverPath: config.inspect<string>('server.path') ?? {},
    serverArgs: config.inspect<string[]>('server.args') ?? {},
    pathEnv: process.env.PATH,
    workspaceFolders: (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath),
    platform: process.platform,
    home: process.env.HOME ?? process.env.USERPROFILE,
    fs: nodeFsProbe(),
    remote,
  });
  for (const note of result.notes) output.appendLine(note);
  if (result.kind === 'found') return result;
  output.appendLine(result.message);
  void vscode.window.showErrorMessage(result.message, 'Open Settings').then((choice) => {
    if (choice !== 'Open Settings') return;
    // Remote windows read machine-scoped settings from the Remote settings file.
    const command = remote ? 'workbench.action.openRemoteSettings' : 'workbench.action.openSettings';
    void vscode.commands.executeCommand(command, remote ? undefined : 'redline.server.path');
  });
  return { problem: result.message };
}
