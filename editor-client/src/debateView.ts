// The debate panel: a webview that streams the turns of the running debate from the server's
// `redline/debate` notifications, with an interjection box, Stop and Export Markdown. The state
// is debateModel's; the page is debateHtml's; this file moves messages between them and the
// server.
import * as vscode from 'vscode';
import { randomBytes } from 'crypto';
import { RedlineClient } from './client';
import { DEBATE_COMMANDS, DebateNotification, REQUESTS, ReportResult, ReviewStateEvent } from './protocol';
import { DebateState, canSteer, debatedScope, emptyDebate, debateMarkdown, reduceDebate, withEnd, withPending, withoutPending } from './debateModel';
import { debatePage, isDebateViewMessage, renderMessage } from './debateHtml';

/** Deltas arrive a few words at a time: the page is redrawn at most this often. */
const RENDER_EVERY_MS = 100;

export class DebateView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private debate: DebateState | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: () => RedlineClient,
    private readonly output: vscode.OutputChannel,
  ) {}

  get state(): DebateState | undefined {
    return this.debate;
  }

  onEvent(n: DebateNotification): void {
    const before = this.debate;
    this.debate = reduceDebate(this.debate, n);
    if (this.debate === before) return; // another task's event
    if (n.event === 'started') this.reveal();
    if (n.event === 'stopped' || n.event === 'final') this.output.appendLine(`Debate ${n.taskId}: ${n.event}`);
    this.setContext();
    this.scheduleRender();
  }

  /** The server accepted a debate: show it (empty until its first event), not the last one. */
  begin(taskId: string, folder: string): void {
    if (this.debate?.taskId !== taskId) this.debate = emptyDebate(taskId, folder);
    this.setContext();
    this.reveal();
    this.scheduleRender();
  }

  /** A debate's task that fails or is cancelled ends without its final event. */
  onReviewState(e: ReviewStateEvent): void {
    if (!this.debate || e.taskId !== this.debate.taskId) return;
    if (e.state !== 'failed' && e.state !== 'cancelled') return;
    this.debate = withEnd(this.debate, e.state, (e.state === 'failed' ? e.error : e.reason) ?? '');
    this.setContext();
    this.scheduleRender();
  }

  /** The server stopped: a debate it ran is over, whatever it last said. */
  serverGone(): void {
    if (this.debate && this.debate.phase !== 'finished') {
      this.debate = { ...this.debate, phase: 'finished', pending: [] };
      this.setContext();
      this.scheduleRender();
    }
  }

  reveal(): void {
    if (this.panel === undefined) {
      this.panel = vscode.window.createWebviewPanel('redline.debate', 'Redline Debate', vscode.ViewColumn.Beside, {
        enableScripts: true,
        enableCommandUris: false,
        enableForms: false,
        localResourceRoots: [],
      });
      this.panel.onDidDispose(() => (this.panel = undefined));
      this.panel.webview.onDidReceiveMessage((m: unknown) => this.onMessage(m));
      // Hidden and shown again, the page reloads from its HTML: it asks for the state ('ready').
      this.panel.webview.html = debatePage(this.debate, randomBytes(16).toString('base64'));
    } else {
      this.panel.reveal(undefined, true);
    }
    this.setTitle();
  }

  private onMessage(m: unknown): void {
    if (!isDebateViewMessage(m)) return;
    if (m.type === 'ready') this.render();
    else if (m.type === 'interject') void this.interject(m.text);
    else if (m.type === 'stop') void this.stop();
    else void this.exportMarkdown();
  }

  async interject(text: string): Promise<void> {
    const debate = this.debate;
    if (!debate || !canSteer(debate) || !text.trim()) return;
    this.debate = withPending(debate, text);
    this.scheduleRender();
    const answer = await this.client().command<unknown>(DEBATE_COMMANDS.interject, { taskId: debate.taskId, text: text.trim() });
    if (answer === undefined && this.debate) {
      this.debate = withoutPending(this.debate, text);
      this.scheduleRender();
    }
  }

  async stop(): Promise<void> {
    const debate = this.debate;
    if (!debate || !canSteer(debate)) return;
    await this.client().command<unknown>(DEBATE_COMMANDS.stop, { taskId: debate.taskId });
  }

  /** Save the debate as Markdown: the server's report of it (transcript, summaries, findings)
   *  when the last report is this debate's, else what the events said. */
  async exportMarkdown(): Promise<void> {
    const debate = this.debate;
    if (!debate) return;
    const report = debate.phase === 'finished'
      ? await this.client().request<ReportResult>(REQUESTS.report, { folder: debate.folder })
      : undefined;
    const fromServer = report && report.taskId === debate.taskId && !report.running && report.markdown;
    const markdown = fromServer || debateMarkdown(debate);
    const dir = vscode.Uri.parse(debate.folder);
    const target = await vscode.window.showSaveDialog({
      title: 'Export Redline Debate',
      defaultUri: vscode.Uri.joinPath(dir, 'redline-debate.md'),
      filters: { Markdown: ['md'] },
    });
    if (!target) return;
    await vscode.workspace.fs.writeFile(target, Buffer.from(markdown, 'utf-8'));
    this.output.appendLine(`Debate ${debate.taskId} saved to ${target.fsPath} (${fromServer ? 'the server\'s report' : 'from the events'})`);
    const open = await vscode.window.showInformationMessage(`Redline: debate saved to ${target.fsPath}`, 'Open');
    if (open) await vscode.window.showTextDocument(target);
  }

  private setTitle(): void {
    if (this.panel === undefined) return;
    const scope = this.debate ? debatedScope(this.debate) : '';
    this.panel.title = scope ? `Redline Debate: ${scope}` : 'Redline Debate';
  }

  private setContext(): void {
    void vscode.commands.executeCommand('setContext', 'redlineClient.debating', canSteer(this.debate));
  }

  private scheduleRender(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.render();
    }, RENDER_EVERY_MS);
  }

  private render(): void {
    if (this.panel === undefined) return;
    this.setTitle();
    void this.panel.webview.postMessage(renderMessage(this.debate));
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.panel?.dispose();
  }
}
