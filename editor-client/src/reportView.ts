// The report webview: the last review's whole report (summary, findings, coverage) from the
// `redline/report` request. (A running debate has its own panel, debateView.ts: it streams, and
// takes the user's interjections.)
import * as vscode from 'vscode';
import { randomBytes } from 'crypto';
import { ReportSection, reportPage } from './reportHtml';

export class ReportView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private sections: ReportSection[] = [];

  get visible(): boolean {
    return this.panel !== undefined;
  }

  /** Replace the report and reveal the panel; with `reveal` false, an open panel is updated
   *  where it is (not brought in front of the debate panel that shares its editor group). */
  show(markdown: string | null, title?: string, reveal = true): void {
    this.sections = markdown ? [{ markdown }] : [];
    if (reveal || this.panel === undefined) this.ensurePanel(title);
    else this.panel.title = title ? `Redline: ${title}` : 'Redline Report';
    this.render();
  }

  private ensurePanel(title?: string): void {
    if (this.panel === undefined) {
      this.panel = vscode.window.createWebviewPanel('redline.report', 'Redline Report', vscode.ViewColumn.Beside, {
        enableScripts: false,
        enableCommandUris: false,
        localResourceRoots: [],
      });
      this.panel.onDidDispose(() => (this.panel = undefined));
    } else {
      this.panel.reveal(undefined, true);
    }
    this.panel.title = title ? `Redline: ${title}` : 'Redline Report';
  }

  private render(): void {
    if (this.panel === undefined) return;
    this.panel.webview.html = reportPage(this.sections, randomBytes(16).toString('base64'));
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
