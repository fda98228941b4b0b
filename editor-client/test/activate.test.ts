// Activation against a fake `vscode` module: every command package.json contributes is
// registered, and with no server installed the user gets the install notification.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'path';
import * as fs from 'fs';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Module = require('module') as { _load: (request: string, ...rest: unknown[]) => unknown };

const registered: string[] = [];
const errors: { message: string; items: string[] }[] = [];
const contexts = new Map<string, unknown>();

class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  dispose(): void { this.fn(); }
  static from(...items: { dispose(): void }[]): Disposable { return new Disposable(() => items.forEach((i) => i.dispose())); }
}
class EventEmitter<T> {
  private listeners: ((e: T) => void)[] = [];
  event = (l: (e: T) => void) => { this.listeners.push(l); return new Disposable(); };
  fire(e: T): void { this.listeners.forEach((l) => l(e)); }
  dispose(): void { this.listeners = []; }
}
const noop = () => new Disposable();
const fakeVscode = {
  Disposable, EventEmitter,
  ThemeIcon: class { static File = {}; constructor(public id: string) {} },
  ThemeColor: class { constructor(public id: string) {} },
  TreeItem: class { constructor(public label: string) {} },
  TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
  StatusBarAlignment: { Left: 1, Right: 2 },
  ViewColumn: { Beside: -2 },
  Uri: { parse: (s: string) => ({ toString: () => s }), file: (p: string) => ({ fsPath: p }) },
  window: {
    createOutputChannel: () => ({ appendLine: () => undefined, append: () => undefined, show: () => undefined, dispose: () => undefined }),
    createTreeView: () => ({ dispose: () => undefined, description: undefined }),
    createStatusBarItem: () => ({ show: () => undefined, dispose: () => undefined }),
    showErrorMessage: (message: string, ...items: string[]) => { errors.push({ message, items }); return Promise.resolve(undefined); },
    showWarningMessage: () => Promise.resolve(undefined),
    showInformationMessage: () => Promise.resolve(undefined),
    activeTextEditor: undefined,
  },
  workspace: {
    workspaceFolders: [],
    getConfiguration: () => ({ get: () => undefined, inspect: (key: string) => ({ key, defaultValue: key === 'server.args' ? ['lsp'] : '' }) }),
    onDidChangeConfiguration: noop,
  },
  commands: {
    registerCommand: (id: string) => { registered.push(id); return new Disposable(); },
    executeCommand: (id: string, key?: string, value?: unknown) => {
      if (id === 'setContext' && key) contexts.set(key, value);
      return Promise.resolve(undefined);
    },
  },
  env: { clipboard: { writeText: () => Promise.resolve() } },
};

// vscode-languageclient subclasses vscode's classes at import: anything the fake lacks is an empty class.
const vscodeModule = new Proxy(fakeVscode as Record<string | symbol, unknown>, {
  get: (target, key) => (key in target ? target[key] : class {}),
});

const load = Module._load;
Module._load = function (request: string, ...rest: unknown[]) {
  return request === 'vscode' ? vscodeModule : load.call(this, request, ...rest);
};

test('activate registers every contributed command and reports a missing server', async () => {
  const savedPath = process.env.PATH;
  process.env.PATH = '/nonexistent-redline-test-dir';
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const extension = require('../src/extension') as { activate(ctx: unknown): Promise<void>; deactivate(): Promise<void> };
    const context = { subscriptions: [] as { dispose(): void }[] };
    await extension.activate(context);
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
    const contributed: string[] = manifest.contributes.commands.map((c: { command: string }) => c.command);
    assert.deepEqual([...registered].sort(), [...contributed].sort());
    assert.ok(contributed.every((id) => id.startsWith('redlineClient.')), 'never the server\'s redline.* ids');
    assert.equal(errors.length, 1);
    // This build has no bundled wheel (no extension directory): the message does not offer it.
    assert.match(errors[0].message, /not found on PATH\. Install Redline, or set "redline.server.path"/);
    assert.doesNotMatch(errors[0].message, /Choose "Install Redline"/);
    assert.doesNotMatch(errors[0].message, /install redline/);
    assert.deepEqual(errors[0].items, ['Open Settings']);
    assert.equal(contexts.get('redlineClient.hasReview'), false);
    assert.equal(contexts.get('redlineClient.noServer'), true); // the sidebar says so, with buttons
    assert.equal(contexts.get('redlineClient.groupBy'), 'file');
    await extension.deactivate();
    context.subscriptions.forEach((d) => d.dispose());
  } finally {
    process.env.PATH = savedPath;
  }
});
