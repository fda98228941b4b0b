// "The Redline server was not found": the notification with its fixes, and the install from the
// wheel this extension ships, run only when the user chose it, with its command line and output
// in the Redline output channel. The decisions (which installer, which command, where) are
// install.ts's, unit-tested.
import * as vscode from 'vscode';
import * as fs from 'fs';
import * as path from 'path';
import { spawn } from 'child_process';
import { InstallPlan, WHEEL_DIR, commandLine, installedServer, planInstall } from './install';
import { installHint, nodeFsProbe, settingHint } from './serverDiscovery';
import { FoundServer, findServer, isRemote, openServerSetting, serverArgs, workspaceFolderPaths } from './serverDiscovery.vscode';

const INSTALL = 'Install Redline';
const SETTINGS = 'Open Settings';

function plan(extensionPath: string | undefined): InstallPlan {
  if (!extensionPath) return { kind: 'none', message: '', notes: [] };
  let wheelFiles: string[] | undefined;
  try {
    wheelFiles = fs.readdirSync(path.join(extensionPath, WHEEL_DIR));
  } catch {
    wheelFiles = undefined;
  }
  return planInstall({
    pathEnv: process.env.PATH,
    platform: process.platform,
    workspaceFolders: workspaceFolderPaths(),
    extensionPath,
    wheelFiles,
    fs: nodeFsProbe(),
  });
}

/** Tell the user there is no server and offer the fixes. Resolves to a server to start once the
 *  user installed one here, else undefined. */
export async function offerServerInstall(
  output: vscode.OutputChannel,
  extensionPath: string | undefined,
  problem: string,
): Promise<FoundServer | undefined> {
  const install = plan(extensionPath);
  for (const note of install.notes) output.appendLine(note);
  // Where nothing can be installed from here, the hint does not offer it.
  const remote = isRemote();
  const text = install.kind === 'none'
    ? [problem.replace(installHint(remote), settingHint(remote)), install.message].filter((t) => t).join(' ')
    : problem;
  if (install.kind === 'none' && install.message) output.appendLine(install.message);
  const items = install.kind === 'install' ? [INSTALL, SETTINGS] : [SETTINGS];
  const choice = await vscode.window.showErrorMessage(text, ...items);
  if (choice === SETTINGS) await openServerSetting();
  if (choice !== INSTALL || install.kind !== 'install') return undefined;
  return runInstall(install, output);
}

function run(command: string, args: string[], cwd: string, onData: (text: string) => void): Promise<number> {
  return new Promise((resolve) => {
    // No shell: the wheel's path is an argument, never parsed by a shell.
    const child = spawn(command, args, { cwd, env: process.env, shell: false, windowsHide: true });
    child.stdout.on('data', (d: Buffer) => onData(d.toString()));
    child.stderr.on('data', (d: Buffer) => onData(d.toString()));
    child.on('error', (error) => {
      onData(`${error.message}\n`);
      resolve(-1);
    });
    child.on('close', (code) => resolve(code ?? -1));
  });
}

async function runInstall(install: Extract<InstallPlan, { kind: 'install' }>, output: vscode.OutputChannel): Promise<FoundServer | undefined> {
  output.show(true);
  output.appendLine(`Installing the Redline server from the wheel this extension ships, with ${install.installer} (in ${install.cwd}):`);
  output.appendLine(`$ ${commandLine(install.command, install.args)}`);
  const code = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Installing Redline with ${install.installer}…` },
    () => run(install.command, install.args, install.cwd, (t) => output.append(t)),
  );
  if (code !== 0) {
    output.appendLine(`${install.installer} failed (exit code ${code}): the Redline server was not installed.`);
    void vscode.window.showErrorMessage(`Redline: ${install.installer} could not install the server (exit code ${code}); the output says why.`, 'Show Output')
      .then((c) => c && output.show());
    return undefined;
  }
  output.appendLine(`${install.installer} installed the Redline server.`);
  // On PATH now (the installer's bin directory usually is): started like any other.
  const found = findServer(output);
  if (!('problem' in found)) return found;
  // Else where the installer put it, by its own answer.
  let binDir = '';
  await run(install.command, install.binDirArgs, install.cwd, (t) => (binDir += t));
  const program = installedServer(binDir, process.platform, workspaceFolderPaths(), nodeFsProbe());
  if (program === undefined) {
    output.appendLine(`The installed redline was not found (${install.installer} said its programs go to ${binDir.trim() || 'an unknown directory'}).`);
    void vscode.window.showErrorMessage('Redline: the server was installed but not found; set "redline.server.path" in your user settings.', SETTINGS)
      .then((c) => c && openServerSetting());
    return undefined;
  }
  output.appendLine(`Starting ${program}: its directory is not on VS Code's PATH.`);
  void vscode.window.showInformationMessage(
    `Redline was installed as ${program}. Its directory is not on PATH: add it to PATH, or set "redline.server.path", so that the next window finds it too.`,
    'Set redline.server.path',
  ).then(async (c) => {
    if (c) await vscode.workspace.getConfiguration('redline').update('server.path', program, vscode.ConfigurationTarget.Global);
  });
  return { command: program, args: serverArgs(), source: `${install.installer} install` };
}
