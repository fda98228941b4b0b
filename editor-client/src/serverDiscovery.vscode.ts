// The VS Code side of server discovery: reads the settings (user scope only) and reports a
// missing server with install instructions and a button to the setting.
import * as vscode from 'vscode';
import { discoverServer, nodeFsProbe } from './serverDiscovery';

export function findServer(output: vscode.OutputChannel): { command: string; args: string[]; source: string } | undefined {
  const config = vscode.workspace.getConfiguration('redline');
  const result = discoverServer({
    serverPath: config.inspect<string>('server.path') ?? {},
    serverArgs: config.inspect<string[]>('server.args') ?? {},
    pathEnv: process.env.PATH,
    workspaceFolders: (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath),
    platform: process.platform,
    home: process.env.HOME ?? process.env.USERPROFILE,
    fs: nodeFsProbe(),
  });
  for (const note of result.notes) output.appendLine(note);
  if (result.kind === 'found') return result;
  output.appendLine(result.message);
  void vscode.window.showErrorMessage(result.message, 'Open Settings').then((choice) => {
    if (choice === 'Open Settings') {
      void vscode.commands.executeCommand('workbench.action.openSettings', 'redline.server.path');
    }
  });
  return undefined;
}
