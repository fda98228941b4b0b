// The install offer end to end against a fake `vscode` and a fake `uv` on PATH: nothing runs
// until the user chooses "Install Redline"; then the command line and the installer's output go
// to the output channel, the installer runs in the extension's directory (never a workspace),
// and the program it installed is the server to start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Module = require('module') as { _load: (request: string, ...rest: unknown[]) => unknown };

const lines: string[] = [];
const errors: { message: string; items: string[] }[] = [];
let answer: string | undefined;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'redline-install-'));
const workspace = path.join(root, 'repo');
fs.mkdirSync(workspace);

const fakeVscode = {
  ProgressLocation: { Notification: 15 },
  ConfigurationTarget: { Global: 1 },
  env: { remoteName: undefined },
  window: {
    showErrorMessage: (message: string, ...items: string[]) => { errors.push({ message, items }); return Promise.resolve(answer); },
    showInformationMessage: () => Promise.resolve(undefined),
    withProgress: (_opts: unknown, task: () => Promise<unknown>) => task(),
  },
  workspace: {
    workspaceFolders: [{ uri: { scheme: 'file', fsPath: workspace } }],
    getConfiguration: () => ({ inspect: (key: string) => ({ key, defaultValue: key === 'server.args' ? ['lsp'] : '' }), update: () => Promise.resolve() }),
  },
  commands: { executeCommand: () => Promise.resolve(undefined) },
};
const load = Module._load;
Module._load = function (request: string, ...rest: unknown[]) {
  return request === 'vscode' ? fakeVscode : load.call(this, request, ...rest);
};

const output = { appendLine: (l: string) => lines.push(l), append: (t: string) => lines.push(t), show: () => undefined };

/** An extension directory with a wheel, and a fake uv that records where and how it ran. */
function setUp(): { ext: string; tools: string; bin: string; record: string } {
  const ext = path.join(root, 'ext');
  fs.mkdirSync(path.join(ext, 'server'), { recursive: true });
  fs.writeFileSync(path.join(ext, 'server', 'redline-0.1.0-py3-none-any.whl'), 'not really a wheel');
  const tools = path.join(root, 'tools');
  const bin = path.join(root, 'tool-bin');
  const record = path.join(root, 'record');
  fs.mkdirSync(tools, { recursive: true });
  fs.writeFileSync(path.join(tools, 'uv'), [
    '#!/bin/sh',
    'PATH=/usr/bin:/bin',
    `if [ "$1 $2" = "tool dir" ]; then echo "${bin}"; exit 0; fi`,
    `echo "$(pwd) $*" >> "${record}"`,
    'echo "Resolved 42 packages"',
    `mkdir -p "${bin}" && printf '#!/bin/sh\\n' > "${bin}/redline" && chmod +x "${bin}/redline"`,
    'echo "Installed 1 executable: redline" >&2',
  ].join('\n'), { mode: 0o755 });
  return { ext, tools, bin, record };
}

test('neither uv nor pipx: no install offered, and the message says what to install', async () => {
  const { ext } = setUp();
  const savedPath = process.env.PATH;
  process.env.PATH = path.join(root, 'empty');
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { offerServerInstall } = require('../src/install.vscode') as typeof import('../src/install.vscode');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { installHint } = require('../src/serverDiscovery') as typeof import('../src/serverDiscovery');
    answer = 'Install Redline';
    const problem = `The Redline language server (redline) was not found on PATH. ${installHint(false)}`;
    assert.equal(await offerServerInstall(output as never, ext, problem), undefined);
    const shown = errors.pop()!;
    assert.deepEqual(shown.items, ['Open Settings']);
    assert.match(shown.message, /Neither uv nor pipx is on PATH/);
    assert.doesNotMatch(shown.message, /Choose "Install Redline"/);
  } finally {
    process.env.PATH = savedPath;
  }
});

test('no install unless chosen; when chosen, the command and its output are shown, then the server is found', async () => {
  const { ext, tools, bin, record } = setUp();
  const savedPath = process.env.PATH;
  process.env.PATH = tools; // uv only: the installed redline is not on PATH
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { offerServerInstall } = require('../src/install.vscode') as typeof import('../src/install.vscode');
    answer = undefined; // the user closes the notification
    assert.equal(await offerServerInstall(output as never, ext, 'The Redline language server (redline) was not found on PATH.'), undefined);
    assert.deepEqual(errors[0].items, ['Install Redline', 'Open Settings']);
    assert.equal(fs.existsSync(record), false, 'nothing ran');

    answer = 'Install Redline';
    const found = await offerServerInstall(output as never, ext, 'not found');
    const wheel = path.join(fs.realpathSync(ext), 'server', 'redline-0.1.0-py3-none-any.whl');
    assert.ok(lines.includes(`$ ${path.join(tools, 'uv')} tool install --force ${wheel}`), lines.join('\n'));
    const shown = lines.join('');
    assert.match(shown, /Resolved 42 packages/);
    assert.match(shown, /Installed 1 executable: redline/);
    // Run once, in the extension's directory, with the bundled wheel.
    assert.equal(fs.readFileSync(record, 'utf-8'), `${fs.realpathSync(ext)} tool install --force ${wheel}\n`);
    assert.deepEqual(found, { command: path.join(bin, 'redline'), args: ['lsp'], source: 'uv install' });
  } finally {
    process.env.PATH = savedPath;
    fs.rmSync(root, { recursive: true, force: true });
  }
});
