// The language client: start, stop, restart (on `redline.server.*` changes and on request), crash
// handling with a restart offer, and the server's custom notifications handed to the UI.
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  MessageType,
  ServerOptions,
  ShowMessageNotification,
  State,
} from 'vscode-languageclient/node';
import { DebateNotification, FindingsPayload, NOTIFICATIONS, ReviewStateEvent } from './protocol';
import { FoundServer, findServer } from './serverDiscovery.vscode';
import { offerServerInstall } from './install.vscode';
import { serverErrorMessage } from './args';

export interface ClientEvents {
  onFindings(payload: FindingsPayload): void;
  onReviewState(event: ReviewStateEvent): void;
  onDebate(event: DebateNotification): void;
  onRunningChanged(running: boolean): void;
  /** There is no server (not found, did not start, stopped): why, for the status bar. */
  onServerDown(reason: string): void;
}

/** How long a message the server showed counts as "already shown" for an error answer with the
 *  same text that follows it (a command's error is only answered, never also shown, by today's
 *  server; an older one did both). */
const SHOWN_WINDOW_MS = 3000;

export class RedlineClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly shown = new Map<string, number>();
  private starting: Promise<void> | undefined;

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly events: ClientEvents,
    /** The extension's directory, where the .vsix keeps Redline's wheel. */
    private readonly extensionPath?: string,
  ) {}

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  async start(): Promise<void> {
    if (this.starting) return this.starting;
    this.starting = this.doStart().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async doStart(installed?: FoundServer): Promise<void> {
    const server = installed ?? findServer(this.output);
    if ('problem' in server) {
      this.events.onServerDown(server.problem);
      // Not awaited: activation does not wait for the user to answer the notification.
      void offerServerInstall(this.output, this.extensionPath, server.problem).then((found) => {
        if (found !== undefined && this.client === undefined && this.starting === undefined) {
          this.starting = this.doStart(found).finally(() => (this.starting = undefined));
        }
      });
      return;
    }
    this.output.appendLine(`Starting ${server.command} ${server.args.join(' ')} (from ${server.source})`);
    const serverOptions: ServerOptions = { command: server.command, args: server.args, options: { env: process.env } };
    const clientOptions: LanguageClientOptions = {
      // Every file scheme the server can read from disk; untitled buffers have no repository.
      documentSelector: [{ scheme: 'file' }],
      synchronize: { configurationSection: 'redline' },
      // VS Code shows a diagnostic's message at the top of the hover: the server's hover then
      // leaves the title and first paragraph out instead of repeating them. The status bar and
      // the sidebar say how each review ended ("no findings"): the server need not say it too.
      initializationOptions: { hoverBesideDiagnostic: true, clientShowsOutcome: true },
      outputChannel: this.output,
      // The review can take minutes; progress and errors are shown by the extension itself.
      revealOutputChannelOn: 4, // RevealOutputChannelOn.Never
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          void this.offerRestart();
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    const client = new LanguageClient('redline', 'Redline', serverOptions, clientOptions);
    client.onNotification(NOTIFICATIONS.findings, (p: FindingsPayload) => this.events.onFindings(p));
    client.onNotification(NOTIFICATIONS.reviewState, (e: ReviewStateEvent) => this.events.onReviewState(e));
    client.onNotification(NOTIFICATIONS.debate, (e: DebateNotification) => this.events.onDebate(e));
    // Replaces the client's default: the same display, but remembered, so a command's error answer
    // that repeats it is not shown twice.
    client.onNotification(ShowMessageNotification.type, (m) => this.showServerMessage(m.type, m.message));
    client.onDidChangeState((e) => this.events.onRunningChanged(e.newState === State.Running));
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      this.output.appendLine(`The Redline server did not start: ${serverErrorMessage(error)}`);
      this.events.onServerDown(`The Redline server did not start: ${serverErrorMessage(error)}`);
      void vscode.window.showErrorMessage(`Redline: the server did not start: ${serverErrorMessage(error)}`, 'Show Output')
        .then((choice) => choice && this.output.show());
      return;
    }
    const info = client.initializeResult?.serverInfo;
    this.output.appendLine(`Redline server ${info?.name ?? 'redline'} ${info?.version ?? '(version unknown)'} is running.`);
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client === undefined) return;
    try {
      if (client.state !== State.Stopped) await client.stop(5000);
    } catch (error) {
      this.output.appendLine(`Stopping the server: ${serverErrorMessage(error)}`);
    }
    await client.dispose().catch(() => undefined);
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  private async offerRestart(): Promise<void> {
    this.output.appendLine('The Redline server stopped unexpectedly.');
    this.events.onServerDown('The Redline server stopped unexpectedly.');
    const choice = await vscode.window.showWarningMessage(
      'The Redline server stopped unexpectedly.', 'Restart Server', 'Show Output');
    if (choice === 'Restart Server') await this.restart();
    if (choice === 'Show Output') this.output.show();
  }

  private showServerMessage(type: MessageType, message: string): void {
    this.shown.set(message, Date.now());
    if (type === MessageType.Error) void vscode.window.showErrorMessage(message);
    else if (type === MessageType.Warning) void vscode.window.showWarningMessage(message);
    else if (type === MessageType.Info) void vscode.window.showInformationMessage(message);
    else this.output.appendLine(message);
  }

  /** Show a server error to the user, unless the server has just shown the same text itself. */
  showError(error: unknown, method?: string): void {
    const text = `Redline: ${serverErrorMessage(error, method)}`;
    const at = this.shown.get(text);
    this.output.appendLine(text);
    if (at !== undefined && Date.now() - at < SHOWN_WINDOW_MS) return;
    void vscode.window.showErrorMessage(text);
  }

  private require(): LanguageClient {
    if (this.client === undefined || this.client.state !== State.Running) {
      throw new Error('the Redline server is not running (see "Redline: Show Output")');
    }
    return this.client;
  }

  /** A `workspace/executeCommand` of the server; errors are shown, then rethrown as undefined. */
  async command<T>(command: string, args?: unknown): Promise<T | undefined> {
    try {
      const params = { command, arguments: args === undefined ? [] : [args] };
      return (await this.require().sendRequest(ExecuteCommandRequest.type, params)) as T;
    } catch (error) {
      this.showError(error);
      return undefined;
    }
  }

  async request<T>(method: string, params: unknown): Promise<T | undefined> {
    try {
      return await this.require().sendRequest<T>(method, params);
    } catch (error) {
      this.showError(error, method);
      return undefined;
    }
  }

  dispose(): void {
    void this.stop();
  }
}
