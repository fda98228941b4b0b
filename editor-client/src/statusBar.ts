// The status bar item: the review's state in a word; a click shows the findings, or offers to
// cancel the running review (VS Code's own progress indicator has no cancel button for it).
import * as vscode from 'vscode';
import { ReviewStatus, statusBarView } from './statusText';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('redline.status', vscode.StatusBarAlignment.Left, 10);

  constructor() {
    this.item.name = 'Redline';
    this.item.command = 'redlineClient.statusBarClick';
    this.show({ phase: 'idle' });
    this.item.show();
  }

  private click: 'focus' | 'cancel' | 'output' = 'focus';

  show(status: ReviewStatus): void {
    const view = statusBarView(status);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.click = view.click;
  }

  async onClick(cancel: () => Promise<void>): Promise<void> {
    if (this.click === 'output') {
      await vscode.commands.executeCommand('redlineClient.showOutput');
      return;
    }
    if (this.click === 'cancel') {
      const choice = await vscode.window.showInformationMessage('Redline is reviewing.', 'Cancel Review', 'Show Findings');
      if (choice === 'Cancel Review') await cancel();
      if (choice === 'Show Findings') await vscode.commands.executeCommand('redline.findings.focus');
      return;
    }
    await vscode.commands.executeCommand('redline.findings.focus');
  }

  dispose(): void {
    this.item.dispose();
  }
}
