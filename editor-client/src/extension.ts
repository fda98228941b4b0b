// Activation: wiring only. Each piece lives in its own module.
import * as vscode from 'vscode';
import { RedlineClient } from './client';
import { FindingsStore } from './findingsModel';
import { FindingsView } from './findingsView';
import { StatusBar } from './statusBar';
import { ReportView } from './reportView';
import { Session } from './session';
import { registerCommands } from './commands';
import { DebateView } from './debateView';

let client: RedlineClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('Redline');
  const store = new FindingsStore();
  const tree = new FindingsView(store);
  const statusBar = new StatusBar();
  const report = new ReportView();
  const redline: RedlineClient = new RedlineClient(output, {
    onFindings: (p) => session.onFindings(p),
    onReviewState: (e) => {
      session.onReviewState(e);
      debate.onReviewState(e);
    },
    onDebate: (e) => debate.onEvent(e),
    onRunningChanged: (running) => {
      if (running) session.serverUp();
      else {
        session.reset(); // what a stopped server showed is gone with it
        debate.serverGone();
      }
    },
    onServerDown: (reason) => session.serverDown(reason),
  }, context.extensionPath);
  const session = new Session(store, tree, statusBar, report, () => redline);
  const debate = new DebateView(() => redline, output);
  client = redline;

  context.subscriptions.push(
    output, tree, statusBar, report, debate, redline,
    ...registerCommands({
      client: redline,
      session,
      tree,
      debate,
      output,
      onStatusBarClick: () => statusBar.onClick(async () => {
        await vscode.commands.executeCommand('redlineClient.cancel');
      }),
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      // Another binary or other arguments need a new server process; the other redline.*
      // settings reach the running server through workspace/didChangeConfiguration.
      if (e.affectsConfiguration('redline.server')) {
        output.appendLine('redline.server.* changed: restarting the server.');
        void redline.restart();
      }
    }),
  );
  await redline.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
