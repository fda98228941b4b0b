// The review state the UI shows: the findings list and the status, updated from the server's
// notifications and pushed to the tree, the status bar and the report view.
import * as vscode from 'vscode';
import { FindingsStore, countFindings } from './findingsModel';
import { FindingsPayload, ReportResult, REQUESTS, ReviewStateEvent } from './protocol';
import { IDLE, ReviewStatus, reduce, withCurrentCounts } from './statusText';
import { FindingsView } from './findingsView';
import { StatusBar } from './statusBar';
import { ReportView } from './reportView';
import { RedlineClient } from './client';
import { keptRuns, runChoices, shownRuns } from './runs';

export class Session {
  status: ReviewStatus = IDLE;

  constructor(
    readonly store: FindingsStore,
    private readonly tree: FindingsView,
    private readonly statusBar: StatusBar,
    private readonly report: ReportView,
    private readonly client: () => RedlineClient,
  ) {
    this.update();
  }

  onFindings(payload: FindingsPayload): void {
    this.store.update(payload);
    this.status = withCurrentCounts(this.status, countFindings(this.store.payloads()), countFindings(this.store.payloads(), true));
    // After "Clear Findings" the server sends an empty list that belongs to no review: back to
    // the welcome view with its start buttons.
    if (payload.taskId === null && this.store.isEmpty() && this.status.phase !== 'running') this.status = IDLE;
    this.tree.refresh();
    this.update();
  }

  onReviewState(event: ReviewStateEvent): void {
    this.status = reduce(this.status, event);
    this.update();
    // An open report follows each finished review; a debate's replaces it without coming to the
    // front: the user is reading the debate's own panel.
    if (event.state === 'finished' && this.report.visible) void this.showReport(false, event.scope !== 'debate');
  }

  /** The server stopped or restarted: what it showed is gone with it. */
  reset(): void {
    this.store.clear();
    // A server that is down stays reported as down until one runs again (serverUp).
    if (this.status.phase !== 'noServer') this.status = IDLE;
    this.tree.refresh();
    this.update();
  }

  /** No server: the status bar says so until one runs (a notification alone goes away). */
  serverDown(reason: string): void {
    this.store.clear();
    this.status = { phase: 'noServer', error: reason };
    this.tree.refresh();
    this.update();
  }

  serverUp(): void {
    if (this.status.phase !== 'noServer') return;
    this.status = IDLE;
    this.reset();
  }

  async showReport(reveal = true, toFront = true): Promise<void> {
    const result = await this.client().request<ReportResult>(REQUESTS.report, {});
    if (!result) return;
    if (!reveal && !this.report.visible) return;
    const markdown = result.markdown ?? (result.running ? '_A review is running; the report appears when it finishes._' : null);
    this.report.show(markdown, result.scopeLabel ?? undefined, toFront);
  }

  /** "Show Findings Of…": every run together, or one alone (diagnostics and sidebar alike). */
  async chooseRuns(): Promise<void> {
    const payloads = this.store.payloads();
    const runs = keptRuns(payloads);
    if (runs.length === 0) {
      void vscode.window.showInformationMessage('Redline: no review, debate or ask has findings to show yet.');
      return;
    }
    const choices = runChoices(runs, shownRuns(payloads));
    const picked = await vscode.window.showQuickPick(
      choices.map((c) => ({ ...c, label: c.picked ? `$(check) ${c.label}` : c.label })),
      { title: 'Show the findings of…', placeHolder: 'Each run keeps its findings until it runs again', ignoreFocusOut: true },
    );
    if (picked) await this.client().command('redline.showRuns', { runs: picked.runs });
  }

  private update(): void {
    this.statusBar.show(this.status);
    this.tree.describe(this.status);
    const phase = this.status.phase;
    const hasReview = (phase !== 'idle' && phase !== 'noServer') || !this.store.isEmpty() || this.store.scopeLabel() !== null;
    void vscode.commands.executeCommand('setContext', 'redlineClient.hasReview', hasReview);
    void vscode.commands.executeCommand('setContext', 'redlineClient.running', this.status.phase === 'running');
    void vscode.commands.executeCommand('setContext', 'redlineClient.noServer', this.status.phase === 'noServer');
    // Several runs kept (a review and a debate): the sidebar offers to show one or all.
    void vscode.commands.executeCommand('setContext', 'redlineClient.manyRuns', keptRuns(this.store.payloads()).length > 1);
  }
}
