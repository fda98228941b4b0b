#!/usr/bin/env node
// End-to-end test of the Redline VS Code extension in a real VS Code: code-server (VS Code in
// the browser) driven by Debian's Chromium through playwright-core, against the demo repository
// of scripts/demo.py reviewed offline (ruff + bandit, no model).
//
//   node run.mjs --vsix editor-client/redline-0.1.0.vsix --redline .venv/bin/redline
//
// Everything lives in a fresh temporary directory (HOME, XDG_*, REDLINE_CACHE_DIR, the VS Code
// user data and extensions); REDLINE_CONFIG names a file in it that does not exist yet, so a
// user's cache and configuration are never read or written. Asserts what a user sees: the
// sidebar's welcome view, squiggles and Problems rows at the planted lines, the Redline sidebar
// (a click on a finding opens its line), a quick fix, Dismiss… from the sidebar (and
// .redline/dismissed.toml), the status-bar counts, the report panel, the branch and commit
// pickers and their reviews, Apply Fix from the sidebar, Export Report… (SARIF), a failing pull
// request review, a server crash and Restart Server, Open User Configuration (which creates that
// file). Prints the time from Enter on the palette command to the first squiggle and to the
// report's content, and from the crash to its notification and from Restart to a squiggle. On
// failure: a screenshot per step, the code-server and extension-host logs in
// editor-client/e2e/artifacts/, exit 1.

import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, openSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..');
const { values: opts } = parseArgs({
  options: {
    vsix: { type: 'string', default: path.join(ROOT, 'editor-client', 'redline-0.1.0.vsix') },
    redline: { type: 'string', default: path.join(ROOT, '.venv', 'bin', 'redline') },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
    artifacts: { type: 'string', default: path.join(HERE, 'artifacts') },
    timeout: { type: 'string', default: '240' }, // seconds, the whole run
    keep: { type: 'boolean', default: false }, // keep the temporary directory
    headed: { type: 'boolean', default: false },
    // Reproduce what a code-server user meets: redline.server.path only in the User settings.
    'server-path-in-user-settings-only': { type: 'boolean', default: false },
  },
});

const FILE = 'app/reports.py';
// The planted problems (scripts/demo.py EXPECTED) and what the offline review calls them.
const EXPECTED = [
  { key: 'unused import', line: 4, title: 'Unused import `os`', severity: 'Low' },
  { key: 'shell injection', line: 21, title: 'Shell command built from non-constant input', severity: 'Critical' },
  { key: 'bare except', line: 27, title: 'Bare `except`', severity: 'Medium' },
  { key: 'mutable default', line: 31, title: 'Mutable default argument', severity: 'Medium' },
];
const STEP_TIMEOUT = 30_000;
const REVIEW_TIMEOUT = 90_000;

const started = Date.now();
const secs = (ms) => (ms / 1000).toFixed(2);
const log = (msg) => console.log(`e2e [${secs(Date.now() - started).padStart(6)} s] ${msg}`);
const results = [];
const figures = [];

const vsix = path.resolve(opts.vsix);
const redline = path.resolve(opts.redline);
const artifacts = path.resolve(opts.artifacts);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'redline-e2e-'));
const stepsDir = path.join(artifacts, 'steps');
rmSync(artifacts, { recursive: true, force: true });
mkdirSync(stepsDir, { recursive: true });

let codeServer = null;
let browser = null;
let page = null;
let stepNo = 0;
let finished = false;

class Failure extends Error {}
function check(cond, msg) {
  if (!cond) throw new Failure(msg);
}

// ---------------------------------------------------------------------------- environment

const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('REDLINE_') && !k.startsWith('VSCODE_')));
Object.assign(env, {
  HOME: path.join(tmp, 'home'),
  XDG_CONFIG_HOME: path.join(tmp, 'config'),
  XDG_CACHE_HOME: path.join(tmp, 'cache'),
  XDG_DATA_HOME: path.join(tmp, 'data'),
  XDG_STATE_HOME: path.join(tmp, 'state'),
  REDLINE_CACHE_DIR: path.join(tmp, 'redline-cache'),
  // Does not exist yet: "Redline: Open User Configuration" creates it (and nothing else).
  REDLINE_CONFIG: path.join(tmp, 'config', 'redline', 'config.toml'),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  // code-server and its extension host run on the Node this script runs on (Node 24).
  PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`,
});
for (const k of ['HOME', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME']) mkdirSync(env[k], { recursive: true });
const userData = path.join(tmp, 'user-data');
const extensions = path.join(tmp, 'extensions');
const repo = path.join(tmp, 'demo');
const serverLog = path.join(tmp, 'code-server.log');
const codeServerBin = path.join(HERE, 'node_modules', 'code-server', 'out', 'node', 'entry.js');

function run(cmd, args, what) {
  const r = spawnSync(cmd, args, { env, encoding: 'utf-8', timeout: 120_000 });
  if (r.status !== 0) throw new Failure(`${what} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout}`);
  return r.stdout;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------- steps

async function shot(name) {
  if (!page) return null;
  const file = path.join(stepsDir, `${String(stepNo).padStart(2, '0')}-${name}.png`);
  try {
    await page.screenshot({ path: file, fullPage: true, timeout: 10_000 });
    return file;
  } catch {
    return null;
  }
}

async function step(name, fn) {
  stepNo += 1;
  const t = Date.now();
  log(`step ${stepNo}: ${name}`);
  try {
    const out = await fn();
    await shot(name.replace(/[^a-z0-9]+/gi, '-').toLowerCase());
    log(`  ok (${secs(Date.now() - t)} s)`);
    return out;
  } catch (err) {
    await shot(`FAILED-${name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`);
    err.step = name;
    throw err;
  }
}

function pass(check, detail) {
  results.push({ check, ok: true, detail });
  log(`PASS ${check}: ${detail}`);
}

// ---------------------------------------------------------------------------- UI helpers

const sel = {
  workbench: '.monaco-workbench',
  quickInput: '.quick-input-widget',
  quickInputBox: '.quick-input-widget .quick-input-box input',
  quickRows: '.quick-input-widget .quick-input-list .monaco-list-row',
  statusbar: '#workbench\\.parts\\.statusbar',
  sidebar: '#workbench\\.parts\\.sidebar',
  activitybar: '#workbench\\.parts\\.activitybar',
  problemsRows: '.markers-panel .monaco-list-row',
  editor: '.editor-instance .monaco-editor',
  squiggle: '.monaco-editor .squiggly-error, .monaco-editor .squiggly-warning, .monaco-editor .squiggly-info',
  errorShown: '.monaco-dialog-box, .notifications-toasts .notification-list-item .codicon-error',
};

// Error dialogs and error notifications on screen (their text), to fail with what a user reads.
async function errorsShown() {
  return page.evaluate(() =>
    [...document.querySelectorAll('.monaco-dialog-box, .notifications-toasts .notification-list-item')]
      .filter((e) => e.classList.contains('monaco-dialog-box') || e.querySelector('.codicon-error'))
      .map((e) => e.innerText.replace(/\s+/g, ' ').trim()),
  );
}

// Open the quick input with `prefix` (">" = commands, "" = files, ":" = go to line) and type.
async function quickInput(prefix, text) {
  await page.keyboard.press('Escape');
  await page.keyboard.press('F1');
  const box = page.locator(sel.quickInputBox);
  await box.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await box.fill(prefix + text);
}

// Run a command from the palette: F1, type its title, wait until the focused row is that
// command, Enter. Returns the time Enter was pressed.
async function palette(title) {
  await quickInput('>', title);
  const focused = page.locator(`${sel.quickRows}.focused`);
  await page.waitForFunction(
    ({ rows, title }) => {
      const row = document.querySelector(rows + '.focused');
      return row && (row.getAttribute('aria-label') || row.textContent || '').includes(title);
    },
    { rows: sel.quickRows, title },
    { timeout: STEP_TIMEOUT },
  ).catch(async () => {
    const seen = await page.locator(sel.quickRows).allTextContents();
    throw new Failure(`command "${title}" not found in the command palette; rows: ${JSON.stringify(seen.slice(0, 8))}`);
  });
  void focused;
  const t = Date.now();
  await page.keyboard.press('Enter');
  return t;
}

async function statusTexts() {
  return page.locator(`${sel.statusbar} .statusbar-item`).evaluateAll((els) => els.map((e) => e.textContent.trim()).filter(Boolean));
}

async function waitStatus(re, timeout, what) {
  try {
    await page.waitForFunction(
      ({ bar, src }) => [...document.querySelectorAll(bar + ' .statusbar-item')].some((e) => new RegExp(src).test(e.textContent.trim())),
      { bar: sel.statusbar, src: re.source },
      { timeout, polling: 100 },
    );
  } catch {
    throw new Failure(`status bar never showed ${what} (${re}); it shows ${JSON.stringify(await statusTexts())}`);
  }
  return (await statusTexts()).find((t) => re.test(t));
}

async function editorText(editor = sel.editor) {
  return page.locator(`${editor} .view-lines`).first().evaluate((el) =>
    [...el.querySelectorAll('.view-line')]
      .map((l) => ({ top: parseFloat(l.style.top) || 0, text: l.textContent.replace(/\u00a0/g, ' ') }))
      .sort((a, b) => a.top - b.top)
      .map((l) => l.text)
      .join('\n'),
  );
}

// Ctrl+. (the quick-fix menu) until `row` shows: a keypress that lands while the editor is
// still computing its code actions can be dropped; the lightbulb is clicked as a fallback.
async function openQuickFix(row) {
  const deadline = Date.now() + STEP_TIMEOUT;
  for (let attempt = 0; ; attempt++) {
    if (attempt % 2 === 0) await page.keyboard.press('Control+.');
    else await page.locator('.lightBulbWidget').first().click({ timeout: 2_000 }).catch(() => page.keyboard.press('Control+.'));
    try {
      await row.waitFor({ timeout: 4_000 });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await page.keyboard.press('Escape');
    }
  }
}

// The squiggles in the editor, as {line, kind}: each decoration's top matched to a line number.
async function squiggleLines() {
  return page.locator(sel.editor).first().evaluate((ed) => {
    const numbers = [...ed.querySelectorAll('.margin-view-overlays .line-numbers')].map((n) => ({
      line: Number(n.textContent.trim()),
      top: n.getBoundingClientRect().top,
    }));
    const out = [];
    for (const sq of ed.querySelectorAll('[class*="squiggly-"]')) {
      const top = sq.getBoundingClientRect().top;
      const n = numbers.reduce((best, x) => (Math.abs(x.top - top) < Math.abs(best.top - top) ? x : best), { top: Infinity, line: 0 });
      const kind = [...sq.classList].find((c) => c.startsWith('squiggly-')).replace('squiggly-', '');
      if (!out.some((o) => o.line === n.line && o.kind === kind)) out.push({ line: n.line, kind });
    }
    return out.sort((a, b) => a.line - b.line);
  });
}

async function problemRows() {
  return page.locator(sel.problemsRows).evaluateAll((els) => els.map((e) => e.innerText.replace(/\s+/g, ' ').trim()));
}

async function treeRows() {
  return page.locator(`${sel.sidebar} .monaco-list-row[aria-label]`).evaluateAll((els) =>
    els.map((e) => ({ aria: e.getAttribute('aria-label'), text: e.innerText.replace(/\s+/g, ' ').trim() })),
  );
}

async function findingRow(title) {
  return page.locator(`${sel.sidebar} .monaco-list-row[aria-label]`, { hasText: title }).first();
}

// The Redline view in the sidebar: its activity bar item is clicked only when another view (or
// none) is shown — a click on the active item closes the sidebar.
async function showRedlineSidebar() {
  const title = await page.locator(`${sel.sidebar}:visible .composite.title`).first().textContent({ timeout: 1_000 }).catch(() => '');
  if (!/redline/i.test(title)) await page.locator(`${sel.activitybar} [aria-label^="Redline"]`).first().click();
  await page.waitForFunction(
    (bar) => /redline/i.test(document.querySelector(bar + ' .composite.title')?.textContent ?? ''),
    sel.sidebar,
    { timeout: STEP_TIMEOUT },
  ).catch(() => {
    throw new Failure('the Redline view did not open in the sidebar');
  });
}

// Right-click a finding in the sidebar: the entries of its context menu (the menu stays open).
async function findingMenu(title) {
  await (await findingRow(title)).click({ button: 'right' });
  const items = page.locator('.context-view .monaco-menu .action-item a.action-menu-item');
  await items.first().waitFor({ timeout: STEP_TIMEOUT }).catch(() => {
    throw new Failure(`no context menu on the sidebar row "${title}"`);
  });
  return (await items.locator('.action-label').allTextContents()).map((t) => t.trim()).filter(Boolean);
}

// Choose `label` in the open context menu: hover it, then Enter (VS Code's menus act on mouse up
// after a hover; the keyboard is the dependable way).
async function chooseMenuItem(label) {
  const item = page.locator('.context-view .monaco-menu .action-item a.action-menu-item', { hasText: label }).first();
  await item.hover();
  await page.waitForFunction((label) => document.querySelector('.context-view .monaco-menu .action-item.focused')?.textContent.includes(label), label, { timeout: STEP_TIMEOUT });
  await page.keyboard.press('Enter');
}

// A notification toast with `text`: its text once shown, null after `timeout`.
async function waitToast(text, timeout = STEP_TIMEOUT) {
  const toast = page.locator('.notifications-toasts .notification-list-item', { hasText: text }).first();
  return toast.waitFor({ timeout }).then(() => toast.innerText().then((t) => t.replace(/\s+/g, ' ').trim()), () => null);
}

async function toastTexts() {
  return page.locator('.notifications-toasts .notification-list-item').evaluateAll((els) => els.map((e) => e.innerText.replace(/\s+/g, ' ').trim()));
}

// The `redline lsp` processes started under code-server (its descendants), as [pid, args].
function serverProcesses() {
  const ps = spawnSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf-8' }).stdout.trim().split('\n');
  const procs = ps.map((l) => l.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/)).filter(Boolean).map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
  const parent = new Map(procs.map((p) => [p.pid, p.ppid]));
  const under = (pid) => {
    for (let p = parent.get(pid), n = 0; p && n < 50; p = parent.get(p), n++) if (p === codeServer.pid) return true;
    return false;
  };
  return procs.filter((p) => (p.args === `${redline} lsp` || p.args.endsWith(` ${redline} lsp`)) && under(p.pid)).map((p) => [p.pid, p.args]);
}

// The rows of the open quick pick as a user reads them: label, description, detail.
async function quickPickRows() {
  return page.locator(sel.quickRows).evaluateAll((els) =>
    els.map((e) => ({
      label: (e.querySelector('.label-name')?.textContent ?? '').replace(/\s+/g, ' ').trim(),
      description: (e.querySelector('.label-description')?.textContent ?? '').replace(/\s+/g, ' ').trim(),
      detail: (e.querySelector('.quick-input-list-label-meta, .monaco-icon-label-container + *')?.textContent ?? '').replace(/\s+/g, ' ').trim(),
      aria: e.getAttribute('aria-label') ?? '',
      focused: e.classList.contains('focused'),
    })),
  );
}

// Wait for the quick pick titled `title` to list rows (the extension fills it after a request).
async function waitQuickPick(title) {
  try {
    await page.waitForFunction(
      ({ title, rows }) => {
        const t = document.querySelector('.quick-input-widget .quick-input-title');
        return t && t.textContent.includes(title) && document.querySelectorAll(rows).length > 0;
      },
      { title, rows: sel.quickRows },
      { timeout: STEP_TIMEOUT },
    );
  } catch {
    const t = await page.locator('.quick-input-widget .quick-input-title').allTextContents().catch(() => []);
    throw new Failure(`no quick pick "${title}" with rows; title ${JSON.stringify(t)}, errors ${JSON.stringify(await errorsShown())}`);
  }
  return quickPickRows();
}

// Record every text the Redline status bar item shows from now on (a fast offline review may be
// "starting…" for a few milliseconds only): proof that a review ran, not the last one's counts.
async function recordStatus() {
  await page.evaluate((bar) => {
    window.__redlineStatusSeen = [];
    window.__redlineStatusObserver?.disconnect();
    const note = () => {
      for (const e of document.querySelectorAll(bar + ' .statusbar-item')) {
        const t = e.textContent.trim();
        if (t.startsWith('Redline') && window.__redlineStatusSeen.at(-1) !== t) window.__redlineStatusSeen.push(t);
      }
    };
    window.__redlineStatusObserver = new MutationObserver(note);
    window.__redlineStatusObserver.observe(document.querySelector(bar), { subtree: true, childList: true, characterData: true });
  }, sel.statusbar);
}

async function statusSeen() {
  return page.evaluate(() => window.__redlineStatusSeen ?? []);
}

// After recordStatus(): the status bar showed a running review, then settles on `expected`
// (the counts of what the sidebar lists). Returns the texts it showed meanwhile.
async function waitReviewRan(what, expected) {
  try {
    await page.waitForFunction(
      ({ bar, expected }) => {
        const seen = window.__redlineStatusSeen ?? [];
        const ran = seen.some((t) => /^Redline: .*…$/.test(t)); // "starting…", "reviewing 1/3 files…"
        const now = [...document.querySelectorAll(bar + ' .statusbar-item')].map((e) => e.textContent.trim());
        return ran && now.includes(expected);
      },
      { bar: sel.statusbar, expected },
      { timeout: REVIEW_TIMEOUT, polling: 50 },
    );
  } catch {
    throw new Failure(`${what}: the status bar never went from a running review to "${expected}"; it showed ${JSON.stringify(await statusSeen())}; errors ${JSON.stringify(await errorsShown())}`);
  }
  const seen = (await statusSeen()).filter((t) => /^Redline: /.test(t)); // not the progress item
  return seen.slice(seen.findIndex((t) => /…$/.test(t)));
}

// Counts the status bar showed after the review ran that are not the settled ones.
function transientCounts(seen, expected) {
  return [...new Set(seen.filter((t) => !/…$/.test(t) && t !== expected))];
}

// The frame (code-server nests a webview in two iframes) whose body has `text`; null if none.
async function frameWith(text) {
  for (const f of page.frames()) {
    if (f === page.mainFrame()) continue;
    // A frame still loading may not answer at once: do not let it hold up the others.
    const body = await Promise.race([
      f.evaluate(() => (document.body ? document.body.innerText : '')).catch(() => ''),
      new Promise((r) => setTimeout(() => r(''), 250)),
    ]);
    if (body.includes(text)) return f;
  }
  return null;
}

async function waitFrameWith(text, timeout, what) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const f = await frameWith(text);
    if (f) return f;
    if (Date.now() > deadline) throw new Failure(`${what}: no webview frame shows "${text}" after ${timeout / 1000} s; errors ${JSON.stringify(await errorsShown())}`);
    await page.waitForTimeout(50);
  }
}

// The line above the findings in the Redline sidebar (the view's message: scope and counts).
async function sidebarMessage() {
  return page.locator(`${sel.sidebar} .tree-explorer-viewlet-tree-view .message`).evaluateAll((els) => els.map((e) => e.innerText.replace(/\s+/g, ' ').trim()).filter(Boolean).join(' | '));
}

// Wait until the sidebar's line reads `re` (it follows the status bar through the session).
async function waitSidebarMessage(re, what) {
  const deadline = Date.now() + STEP_TIMEOUT;
  let text;
  while (!re.test((text = await sidebarMessage()))) {
    check(Date.now() < deadline, `${what}: the sidebar's line reads "${text}", expected ${re}`);
    await page.waitForTimeout(50);
  }
  return text;
}

async function tabLabels() {
  return page.locator('.tabs-container .tab').evaluateAll((els) =>
    els.map((e) => ({ text: e.textContent.replace(/\s+/g, ' ').trim(), aria: e.getAttribute('aria-label') ?? '', active: e.classList.contains('active') })),
  );
}

// ---------------------------------------------------------------------------- the test

async function main() {
  log(`temporary directory ${tmp}`);
  check(existsSync(vsix), `no extension package at ${vsix} (make vsix)`);
  check(existsSync(redline), `no redline at ${redline} (make setup)`);
  check(existsSync(codeServerBin), `no code-server at ${codeServerBin} (make ${path.relative(ROOT, HERE)}/node_modules/.install-stamp)`);
  check(Number(process.versions.node.split('.')[0]) >= 20, `Node ${process.version}: run with editor-client/e2e/node_modules/node/bin/node (v24)`);

  const ids = await step('build the demo repository and review it with the CLI (finding ids)', async () => {
    const python = path.join(path.dirname(redline), 'python');
    run(python, ['-c', 'import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); import demo; demo.build_demo_repo(Path(sys.argv[2]))', path.join(ROOT, 'scripts'), repo], 'building the demo repository');
    // The CLI's own offline review of the same change, in a separate cache: the ids the editor
    // must show (and write to dismissed.toml).
    const cliEnv = { ...env, REDLINE_CACHE_DIR: path.join(tmp, 'cli-cache') };
    const r = spawnSync(redline, ['review', '--branch', 'main', '--repo', repo, '--format', 'json', '--quiet'], { env: cliEnv, encoding: 'utf-8', timeout: 120_000 });
    check(r.status === 0, `redline review failed: ${r.stderr}`);
    const findings = JSON.parse(r.stdout).findings;
    const byKey = {};
    for (const e of EXPECTED) {
      const f = findings.find((x) => x.file === FILE && x.line === e.line && x.title.startsWith(e.title));
      check(f, `the CLI review has no "${e.title}" at ${FILE}:${e.line}: ${JSON.stringify(findings.map((x) => [x.file, x.line, x.title]))}`);
      byKey[e.key] = f.id;
    }
    return byKey;
  });

  const port = await freePort();
  await step('configure and start code-server', async () => {
    mkdirSync(path.join(userData, 'User'), { recursive: true });
    writeFileSync(
      path.join(userData, 'User', 'settings.json'),
      JSON.stringify(
        {
          'security.workspace.trust.enabled': false,
          'redline.server.path': redline, // a user (machine) setting: never read from the workspace
          'redline.baseBranch': 'main', // deterministic: the demo repository has no origin
          'workbench.startupEditor': 'none',
          'workbench.welcomePage.walkthroughs.openOnInstall': false,
          'workbench.tips.enabled': false,
          'workbench.enableExperiments': false,
          'workbench.editor.enablePreview': false,
          'workbench.secondarySideBar.defaultVisibility': 'hidden',
          'chat.disableAIFeatures': true,
          'chat.commandCenter.enabled': false,
          'telemetry.telemetryLevel': 'off',
          'update.mode': 'none',
          'extensions.ignoreRecommendations': true,
          'extensions.autoCheckUpdates': false,
          'extensions.autoUpdate': false,
          'git.openRepositoryInParentFolders': 'never',
          'editor.hover.enabled': false,
          'editor.minimap.enabled': false,
          'files.autoSave': 'off',
          'window.restoreWindows': 'none',
        },
        null,
        2,
      ),
    );
    // `redline.server.path` has scope machine: VS Code reads such settings from the machine's
    // own settings in a remote window, and code-server's window is one — its "Remote" settings
    // file is <user-data-dir>/Machine/settings.json ("Preferences: Open Remote Settings").
    mkdirSync(path.join(userData, 'Machine'), { recursive: true });
    if (!opts['server-path-in-user-settings-only']) writeFileSync(path.join(userData, 'Machine', 'settings.json'), JSON.stringify({ 'redline.server.path': redline }, null, 2));
    const out = run(process.execPath, [codeServerBin, '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', vsix], 'code-server --install-extension');
    log(`  ${out.trim().split('\n').pop()}`);
    const fd = openSync(serverLog, 'a');
    codeServer = spawn(
      process.execPath,
      [codeServerBin, '--auth', 'none', '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--bind-addr', `127.0.0.1:${port}`, '--user-data-dir', userData, '--extensions-dir', extensions, repo],
      { env, stdio: ['ignore', fd, fd], detached: true },
    );
    const deadline = Date.now() + STEP_TIMEOUT;
    for (;;) {
      check(codeServer.exitCode === null, `code-server exited (${codeServer.exitCode}); see ${serverLog}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        if (res.ok) break;
      } catch {}
      check(Date.now() < deadline, `code-server did not answer on 127.0.0.1:${port}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  await step('open the folder in Chromium', async () => {
    browser = await chromium.launch({
      executablePath: opts.chromium,
      headless: !opts.headed,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
    });
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    page = await context.newPage();
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURI(repo)}`);
    await page.locator(sel.workbench).waitFor({ timeout: 60_000 });
    await page.locator(`${sel.sidebar} .monaco-list-row[aria-label]`, { hasText: 'app' }).first().waitFor({ timeout: 60_000 });
  });

  await step(`open ${FILE}; the extension activates`, async () => {
    await quickInput('', FILE);
    await page.locator(`${sel.quickRows}.focused`, { hasText: 'reports.py' }).waitFor({ timeout: STEP_TIMEOUT });
    await page.keyboard.press('Enter');
    await page.locator(`${sel.editor} .view-lines`, { hasText: 'def export_report' }).waitFor({ timeout: STEP_TIMEOUT });
    const idle = await waitStatus(/Redline/, 60_000, 'the Redline item (the extension active)');
    log(`  status bar: "${idle}"`);
  });

  await step('the Redline sidebar before the first review: the welcome view', async () => {
    await showRedlineSidebar();
    const welcome = page.locator(`${sel.sidebar} .welcome-view-content`, { hasText: 'No Redline review yet' }).first();
    await welcome.waitFor({ timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Failure(`the Redline sidebar does not show "No Redline review yet…": ${JSON.stringify(await page.locator(sel.sidebar).innerText())}`);
    });
    const text = (await welcome.innerText()).replace(/\s+/g, ' ').trim();
    log(`  welcome view: ${text}`);
    check(!(await treeRows()).length, `the sidebar lists findings before any review: ${JSON.stringify(await treeRows())}`);
    // Buttons (a link alone on its line), not links in the text.
    const buttons = (await welcome.locator('.monaco-button').allTextContents()).map((t) => t.trim());
    log(`  welcome buttons: ${JSON.stringify(buttons)}`);
    for (const b of ['Review Current Branch', 'Review Uncommitted Changes']) {
      check(buttons.includes(b), `the welcome view has no button "${b}": buttons ${JSON.stringify(buttons)}`);
      check(await welcome.locator('.monaco-button', { hasText: b }).first().isVisible(), `the welcome view's button "${b}" is not visible`);
    }
    pass('welcome view', `"${text.slice(0, 60)}…" with the buttons "Review Current Branch" and "Review Uncommitted Changes"`);
  });

  let t0;
  await step('run "Redline: Review Current Branch" from the palette', async () => {
    t0 = await palette('Redline: Review Current Branch');
  });

  await step('wait for the first squiggle in the editor', async () => {
    // A squiggle, or an error the user would see (a dialog, an error notification): fail fast.
    try {
      await page.waitForFunction(
        ({ squiggle, errors }) => document.querySelector(squiggle) || document.querySelector(errors),
        { squiggle: sel.squiggle, errors: sel.errorShown },
        { timeout: REVIEW_TIMEOUT, polling: 20 },
      );
    } catch {
      throw new Failure(`no squiggle in ${FILE} ${REVIEW_TIMEOUT / 1000} s after the command; status bar ${JSON.stringify(await statusTexts())}`);
    }
    const dt = Date.now() - t0;
    const errors = await errorsShown();
    check(!errors.length || (await page.locator(sel.squiggle).count()) > 0, `the command showed an error: ${JSON.stringify(errors)}`);
    figures.push(`palette → first squiggle: ${secs(dt)} s`);
    console.log(`e2e: palette → first squiggle: ${secs(dt)} s`);
  });

  await step('squiggles at the planted lines', async () => {
    // Which editor lines carry a squiggle (the whole file fits in the editor here).
    let found = [];
    const deadline = Date.now() + STEP_TIMEOUT;
    for (;;) {
      found = await squiggleLines();
      if (EXPECTED.every((e) => found.some((f) => f.line === e.line))) break;
      check(Date.now() < deadline, `squiggles at ${JSON.stringify(found)}, expected lines ${EXPECTED.map((e) => e.line).join(', ')}`);
      await page.waitForTimeout(100);
    }
    pass('squiggles', found.map((f) => `line ${f.line} ${f.kind}`).join(', '));
  });

  await step('status bar shows the counts', async () => {
    // 1 Critical (⛔ = Critical + High), 2 Medium + 1 Low (⚠ = Medium + Low + Info).
    const text = await waitStatus(/Redline: \d+ ⚠ \d+ ⛔/, REVIEW_TIMEOUT, 'the finished counts');
    check(/Redline: 3 ⚠ 1 ⛔/.test(text), `status bar "${text}", expected "Redline: 3 ⚠ 1 ⛔"`);
    figures.push(`palette → review finished (status bar counts): ${secs(Date.now() - t0)} s`);
    pass('status bar', `"${text}"`);
  });

  await step('squiggles and Problems rows at the planted lines', async () => {
    await palette('Problems: Focus on Problems View');
    await page.locator(sel.problemsRows).first().waitFor({ timeout: STEP_TIMEOUT });
    let rows = [];
    const deadline = Date.now() + STEP_TIMEOUT;
    for (;;) {
      rows = await problemRows();
      if (EXPECTED.every((e) => rows.some((r) => r.includes(`[Ln ${e.line},`)))) break;
      if (Date.now() > deadline) break;
      await page.waitForTimeout(200);
    }
    for (const r of rows) log(`  problems: ${r.slice(0, 150)}`);
    for (const e of EXPECTED) {
      const row = rows.find((r) => r.includes(`[Ln ${e.line},`));
      check(row, `no Problems row at [Ln ${e.line} (${e.key}); rows: ${JSON.stringify(rows)}`);
      check(row.includes(e.title), `the Problems row at line ${e.line} does not name "${e.title}": ${row}`);
      check(/redline/i.test(row), `the Problems row at line ${e.line} has no source "redline": ${row}`);
    }
    pass('Problems', `rows at lines ${EXPECTED.map((e) => e.line).join(', ')} of ${FILE}, each with its title and source redline`);
  });

  await step('the Redline sidebar lists the findings', async () => {
    await showRedlineSidebar(); // open since the welcome view's step
    // A wider sidebar, so that the screenshot shows whole titles: drag the sash at its edge.
    const bar = await page.locator(sel.sidebar).boundingBox();
    if (bar) {
      await page.mouse.move(bar.x + bar.width + 1, bar.y + bar.height / 2);
      await page.mouse.down();
      await page.mouse.move(bar.x + bar.width + 180, bar.y + bar.height / 2, { steps: 5 });
      await page.mouse.up();
    }
    await page.locator(`${sel.sidebar} .monaco-list-row[aria-label]`, { hasText: EXPECTED[0].title }).first().waitFor({ timeout: STEP_TIMEOUT });
    const rows = await treeRows();
    for (const r of rows) log(`  sidebar: ${r.text}   [aria-label: ${r.aria}]`);
    for (const e of EXPECTED) {
      const row = rows.find((r) => r.text.includes(e.title));
      check(row, `no sidebar row "${e.title}"; rows: ${JSON.stringify(rows.map((r) => r.text))}`);
      check(new RegExp(`line ${e.line}\\b`).test(row.text), `sidebar row "${e.title}" does not say "line ${e.line}": ${row.text}`);
    }
    await page.mouse.move(900, 300); // off the sash (it stays highlighted under the pointer)
    await page.waitForTimeout(500); // the sash's hover highlight fades out
    await page.screenshot({ path: path.join(artifacts, 'sidebar.png') });
    pass('sidebar', `${EXPECTED.length} findings with their titles and "line N": ${EXPECTED.map((e) => `${e.line}`).join(', ')}`);
  });

  await step('a click on a finding in the sidebar opens its file at its line', async () => {
    const target = EXPECTED.find((e) => e.key === 'shell injection');
    // No editor open, so that the click is what opens the file.
    await palette('View: Close All Editors');
    await page.locator('.tabs-container .tab').first().waitFor({ state: 'detached', timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Failure(`editors still open after "View: Close All Editors": ${JSON.stringify(await tabLabels())}`);
    });
    await (await findingRow(target.title)).click();
    await page.locator('.tabs-container .tab.active', { hasText: path.basename(FILE) }).first().waitFor({ timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Failure(`a click on "${target.title}" did not open ${FILE}; tabs ${JSON.stringify(await tabLabels())}`);
    });
    const tab = (await tabLabels()).find((t) => t.active);
    check(tab.aria.includes(path.basename(FILE)), `the active tab is not ${FILE}: ${JSON.stringify(tab)}`);
    const position = await waitStatus(new RegExp(`Ln ${target.line}, Col \\d+`), STEP_TIMEOUT, `the cursor on line ${target.line}`);
    // The editor's own mark of the cursor's line: the highlighted line number in the gutter.
    const active = await page.locator(`${sel.editor} .line-numbers.active-line-number`).first().textContent({ timeout: STEP_TIMEOUT }).catch(() => null);
    check(active?.trim() === String(target.line), `the editor's current line is ${active?.trim()}, expected ${target.line}`);
    const line = (await editorText()).split('\n').find((l) => l.includes('shell=True'));
    check(line, `${FILE} in the editor has no \`shell=True\` line`);
    pass('finding click', `"${target.title}" opened ${FILE} (tab "${tab.aria}") with the cursor at "${position}" (gutter line ${active.trim()}: \`${line.trim()}\`)`);
  });

  await step('quick fix on line 4 removes `import os` and its finding', async () => {
    const editor = page.locator(`${sel.editor} .view-lines`).first();
    await editor.click();
    await quickInput(':', '4');
    await page.keyboard.press('Enter');
    await waitStatus(/Ln 4, Col/, STEP_TIMEOUT, 'the cursor on line 4');
    const fix = page.locator('.action-widget .monaco-list-row', { hasText: 'Redline: apply fix' });
    try {
      await openQuickFix(fix.first());
    } catch {
      const seen = await page.locator('.action-widget .monaco-list-row').allTextContents();
      throw new Failure(`no "Redline: apply fix" in the quick-fix menu on line 4; it shows ${JSON.stringify(seen)}`);
    }
    const label = (await fix.first().textContent()).trim();
    log(`  quick fix: "${label}"`);
    check(label.includes(EXPECTED[0].title), `the quick fix on line 4 is not for "${EXPECTED[0].title}": ${label}`);
    await fix.first().click();
    await page.waitForFunction(
      (sel) => ![...document.querySelectorAll(sel + ' .view-line')].some((l) => l.textContent.replace(/\u00a0/g, ' ') === 'import os'),
      `${sel.editor} .view-lines`,
      { timeout: STEP_TIMEOUT },
    ).catch(() => {
      throw new Failure('the editor still has `import os` after the quick fix');
    });
    const text = await editorText();
    check(text.includes('import subprocess') && text.includes('import json'), `the fix removed more than \`import os\`:\n${text}`);
    // Save, and wait until the file on disk is the editor's text (a save may be caught half
    // written): `import os` gone, the rest there.
    const original = readFileSync(path.join(repo, FILE), 'utf-8'); // not saved yet
    check(/^import os\n/m.test(original), `${FILE} was saved before Ctrl+S`);
    const expected = original.replace(/^import os\n/m, '');
    await page.keyboard.press('Control+s');
    const deadline = Date.now() + STEP_TIMEOUT;
    let disk;
    while ((disk = readFileSync(path.join(repo, FILE), 'utf-8')) !== expected) {
      check(Date.now() < deadline, `${FILE} on disk is not the file without \`import os\` after the fix and Ctrl+S:\n${disk}`);
      await page.waitForTimeout(100);
    }
    await page.locator('.tabs-container .tab.active.dirty').waitFor({ state: 'detached', timeout: STEP_TIMEOUT })
      .catch(() => { throw new Failure(`the editor of ${FILE} is still dirty after Ctrl+S`); });
    await page.locator(`${sel.sidebar} .monaco-list-row[aria-label]`, { hasText: EXPECTED[0].title }).first()
      .waitFor({ state: 'detached', timeout: STEP_TIMEOUT })
      .catch(async () => {
        throw new Failure(`the sidebar still lists "${EXPECTED[0].title}" after the fix: ${JSON.stringify((await treeRows()).map((r) => r.text))}`);
      });
    const rows = await problemRows();
    check(!rows.some((r) => r.includes(EXPECTED[0].title)), `the Problems panel still lists "${EXPECTED[0].title}" after the fix: ${JSON.stringify(rows)}`);
    // The quick-fix menu on line 4 (now `import subprocess`) no longer offers the fixed finding.
    await page.locator(`${sel.editor} .view-lines`).first().click();
    await quickInput(':', '4');
    await page.keyboard.press('Enter');
    await waitStatus(/Ln 4, Col/, STEP_TIMEOUT, 'the cursor on line 4');
    await page.keyboard.press('Control+.');
    await page.locator('.action-widget .monaco-list-row, .action-widget, .monaco-editor-overlaymessage').first().waitFor({ timeout: 5_000 }).catch(() => {});
    await page.waitForTimeout(300);
    const after = (await page.locator('.action-widget .monaco-list-row').allTextContents()).map((t) => t.trim()).filter(Boolean);
    const message = (await page.locator('.monaco-editor-overlaymessage').allTextContents()).join(' ').trim();
    log(`  quick-fix menu on line 4 after the fix: ${after.length ? JSON.stringify(after) : `none (${message || 'no menu'})`}`);
    await page.keyboard.press('Escape');
    check(!after.some((t) => t.includes(EXPECTED[0].title)), `the quick-fix menu on line 4 still offers the fixed finding: ${JSON.stringify(after)}`);
    const left = (await treeRows()).map((r) => r.text);
    for (const r of left) log(`  sidebar after the fix: ${r}`);
    pass('quick fix', `"${label}" removed \`import os\` (editor and, after Ctrl+S, disk); the finding left the sidebar and Problems`);
  });

  await step('Dismiss… from the sidebar context menu', async () => {
    const target = EXPECTED.find((e) => e.key === 'bare except');
    const reason = 'e2e: the caller logs and re-raises';
    const row = await findingRow(target.title);
    await row.click({ button: 'right' });
    const item = page.locator('.context-view .monaco-menu .action-item a.action-menu-item', { hasText: 'Dismiss' }).first();
    try {
      await item.waitFor({ timeout: STEP_TIMEOUT });
    } catch {
      const seen = await page.locator('.context-view .monaco-menu .action-item').allTextContents();
      throw new Failure(`no "Dismiss…" in the finding's context menu; it shows ${JSON.stringify(seen)}`);
    }
    // VS Code's menus act on mouse up after a hover; the keyboard is the dependable way.
    await item.hover();
    await page.waitForFunction(() => document.querySelector('.context-view .monaco-menu .action-item.focused')?.textContent.includes('Dismiss'), null, { timeout: STEP_TIMEOUT });
    await page.keyboard.press('Enter');
    const box = page.locator(sel.quickInputBox);
    await box.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
    await box.fill(reason);
    await page.keyboard.press('Enter');
    await page.locator(`${sel.sidebar} .monaco-list-row[aria-label]`, { hasText: target.title }).first()
      .waitFor({ state: 'detached', timeout: STEP_TIMEOUT })
      .catch(async () => {
        throw new Failure(`"${target.title}" is still in the sidebar after Dismiss…: ${JSON.stringify((await treeRows()).map((r) => r.text))}`);
      });
    const file = path.join(repo, '.redline', 'dismissed.toml');
    const deadline = Date.now() + STEP_TIMEOUT;
    while (!existsSync(file)) {
      check(Date.now() < deadline, `${file} was not written`);
      await page.waitForTimeout(100);
    }
    const toml = readFileSync(file, 'utf-8');
    log(`  dismissed.toml:\n${toml.replace(/^/gm, '    ')}`);
    check(toml.includes(ids[target.key]), `dismissed.toml does not hold the id ${ids[target.key]} of "${target.title}"`);
    check(toml.includes(reason), `dismissed.toml does not hold the reason "${reason}"`);
    pass('dismiss', `"${target.title}" left the sidebar; .redline/dismissed.toml has id ${ids[target.key]} and the reason "${reason}"`);
    // What a user expects: the counts follow the list (2 left).
    const status = await waitStatus(/Redline: 1 ⚠ 1 ⛔/, 5_000, 'the counts of the two findings left').catch(async () => null);
    check(status !== null, `expected "Redline: 1 ⚠ 1 ⛔" (2 findings left), the status bar shows ${JSON.stringify(await statusTexts())}`);
    pass('status bar after fix + dismiss', `"${status}"`);
  });

  await step('"Redline: Show Report" opens the report panel', async () => {
    const t = await palette('Redline: Show Report');
    // Content first (what the user waits for), then the panel's title and the report's text.
    let tabAt = null;
    void page.locator('.tabs-container .tab', { hasText: 'Redline: ' }).first().waitFor({ timeout: STEP_TIMEOUT }).then(() => (tabAt = Date.now()), () => {});
    const frame = await waitFrameWith('Redline review:', STEP_TIMEOUT, 'Show Report');
    const dt = Date.now() - t;
    log(`  the panel's tab showed ${tabAt ? `${secs(tabAt - t)} s` : 'not yet'}, its content ${secs(dt)} s after Enter`);
    figures.push(`palette → report panel content: ${secs(dt)} s`);
    console.log(`e2e: palette → report panel content: ${secs(dt)} s`);
    const tab = page.locator('.tabs-container .tab', { hasText: 'Redline: branch feature/export vs main' }).first();
    await tab.waitFor({ timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Failure(`no editor tab "Redline: branch feature/export vs main …"; tabs ${JSON.stringify(await tabLabels())}`);
    });
    const title = (await tab.textContent()).replace(/\s+/g, ' ').trim();
    log(`  report tab: "${title}"`);
    const report = await frame.evaluate(() => ({
      h1: document.querySelector('h1')?.innerText ?? '',
      h2: [...document.querySelectorAll('h2')].map((e) => e.innerText.trim()),
      h3: [...document.querySelectorAll('h3')].map((e) => e.innerText.trim()),
      text: document.body.innerText,
    }));
    log(`  report: ${report.h1}`);
    for (const h of report.h3) log(`  report finding: ${h}`);
    check(title.startsWith(`Redline: ${report.h1.replace(/^Redline review: /, '')}`.slice(0, 40)), `the panel title "${title}" is not "Redline: <the report's scope>" (${report.h1})`);
    // The findings left: the report lists each under a "### `file:line` — title" heading.
    for (const key of ['shell injection', 'mutable default']) {
      const e = EXPECTED.find((x) => x.key === key);
      check(report.h3.some((h) => h.includes(`${FILE}:${e.line}`) && h.includes(e.title)), `the report has no finding "${FILE}:${e.line} — ${e.title}": ${JSON.stringify(report.h3)}`);
    }
    // Dismissed and fixed since the review: not among the findings (the Markdown report has no
    // "dismissed" section: it leaves them out entirely), and the summary counts what is left.
    for (const key of ['bare except', 'unused import']) {
      const e = EXPECTED.find((x) => x.key === key);
      const plain = e.title.replace(/`/g, '');
      check(!report.h3.some((h) => h.includes(plain)), `the report still lists the ${key === 'bare except' ? 'dismissed' : 'fixed'} finding "${e.title}": ${JSON.stringify(report.h3)}`);
      check(!report.text.includes(plain), `the report still mentions the ${key === 'bare except' ? 'dismissed' : 'fixed'} finding "${e.title}"`);
    }
    check(report.h3.length === 2, `the report lists ${report.h3.length} findings, expected the 2 left: ${JSON.stringify(report.h3)}`);
    check(/2 findings: 1 Critical, 1 Medium\./.test(report.text), `the report's summary line does not count the 2 findings left: ${report.text.split('\n').slice(0, 4).join(' | ')}`);
    // The coverage: what was reviewed and what was skipped (the lockfile), with why.
    check(report.h2.includes('Coverage'), `the report has no Coverage section: ${JSON.stringify(report.h2)}`);
    const coverage = report.text.slice(report.text.lastIndexOf('Coverage'));
    check(/Skipped: 1\b/.test(coverage) && /poetry\.lock: lockfile/.test(coverage), `the coverage does not name the skipped poetry.lock:\n${coverage}`);
    check(coverage.includes(FILE), `the coverage does not list ${FILE} as reviewed:\n${coverage}`);
    await page.mouse.move(900, 300);
    await page.screenshot({ path: path.join(artifacts, 'report.png') });
    pass('Show Report', `panel "${title.slice(0, 60)}…" shows ${report.h3.length} findings (${report.h3.map((h) => h.replace(/^.* — /, '')).join('; ')}), the coverage with the skipped poetry.lock, not the dismissed "Bare \`except\`" nor the fixed "Unused import \`os\`"`);
  });

  await step('"Redline: Review Branch Against…": pick main', async () => {
    await recordStatus();
    await palette('Redline: Review Branch Against…');
    const rows = await waitQuickPick('Review feature/export against');
    await shot('branch-quick-pick');
    for (const r of rows) log(`  quick pick: ${r.label} — ${r.description}`);
    const main = rows.find((r) => r.label === 'main');
    check(main, `the branch quick pick has no "main": ${JSON.stringify(rows)}`);
    check(/default base/.test(main.description), `"main" is not marked as the default base: "${main.description}"`);
    // The current branch is the one reviewed (the title names it), not a base to pick.
    check(!rows.some((r) => r.label === 'feature/export'), `the branch quick pick offers the current branch feature/export: ${JSON.stringify(rows)}`);
    check(rows.length === 1, `the demo repository has two branches, the quick pick lists ${JSON.stringify(rows)}`);
    const title = (await page.locator('.quick-input-widget .quick-input-title').textContent()).trim();
    await page.locator(sel.quickInputBox).fill('main');
    await page.locator(`${sel.quickRows}.focused`, { hasText: 'main' }).waitFor({ timeout: STEP_TIMEOUT });
    await page.keyboard.press('Enter');
    // `import os` fixed, the bare except dismissed: 2 findings left, 1 Critical + 1 Medium.
    const status = 'Redline: 1 ⚠ 1 ⛔';
    const seen = await waitReviewRan('Review Branch Against… main', status);
    log(`  status bar: ${seen.join(' → ')}`);
    const line = await waitSidebarMessage(/^branch feature\/export vs main .* · 2 findings \(1 ⚠ 1 ⛔\)$/, 'Review Branch Against… main');
    log(`  sidebar line: ${line}`);
    await page.locator(`${sel.sidebar} .monaco-list-row[aria-label]`, { hasText: 'Mutable default argument' }).first().waitFor({ timeout: STEP_TIMEOUT });
    const tree = (await treeRows()).map((r) => r.text);
    for (const r of tree) log(`  sidebar: ${r}`);
    check(tree.some((r) => r.includes('Shell command built from non-constant input')), `the sidebar lacks the shell finding: ${JSON.stringify(tree)}`);
    check(!tree.some((r) => r.includes('Bare') || r.includes('Unused import')), `the sidebar lists a dismissed or fixed finding: ${JSON.stringify(tree)}`);
    pass('Review Branch Against…', `quick pick "${title}" offers ${rows.map((r) => `${r.label} (${r.description})`).join(', ')}; picked main; the status bar went "${seen[0]}" … "${status}"; the sidebar lists the 2 findings left`);
    const flicker = transientCounts(seen, status);
    // The "finished" event counts what is shown: never, even for a moment, a finding fixed since.
    check(flicker.length === 0, `after Review Branch Against… the status bar showed ${JSON.stringify(flicker)} before "${status}"`);
  });

  await step('"Redline: Review Commit…": pick the latest commit', async () => {
    // What the server should report for HEAD: the CLI's review of the same commit, now (with
    // .redline/dismissed.toml in the working tree), in a separate cache.
    const cliEnv = { ...env, REDLINE_CACHE_DIR: path.join(tmp, 'cli-cache') };
    const r = spawnSync(redline, ['review', '--commit', 'HEAD', '--repo', repo, '--format', 'json', '--quiet'], { env: cliEnv, encoding: 'utf-8', timeout: 120_000 });
    check(r.status === 0, `redline review --commit HEAD failed: ${r.stderr}`);
    const cli = JSON.parse(r.stdout);
    // The commit still has `import os`, fixed in the working tree earlier in this run: the editor
    // shows a finding only while its code is there (the same id: the fix closed it).
    const fixedId = ids['unused import'];
    check(cli.findings.some((f) => f.id === fixedId), `the CLI's review of HEAD has no "${EXPECTED[0].title}" (${fixedId}): ${JSON.stringify(cli.findings.map((f) => [f.id, f.title]))}`);
    const shown = cli.findings.filter((f) => f.id !== fixedId);
    const bad = shown.filter((f) => f.severity === 'Critical' || f.severity === 'High').length;
    const notBlocking = shown.length - bad;
    const expectedStatus = `Redline: ${[notBlocking ? `${notBlocking} ⚠` : '', bad ? `${bad} ⛔` : ''].filter(Boolean).join(' ') || 'no findings'}`;
    log(`  the CLI's review of HEAD: ${cli.scope_label}: ${JSON.stringify(cli.findings.map((f) => `${f.line} ${f.severity} ${f.title}`))}; without the fixed one → "${expectedStatus}"`);
    await recordStatus();
    await palette('Redline: Review Commit…');
    const rows = await waitQuickPick('Review Commit');
    await shot('commit-quick-pick');
    for (const row of rows) log(`  quick pick: ${row.label} — ${row.description} — ${row.aria}`);
    const subjects = ['Export reports as zip archives', 'Reporting service'];
    check(rows.length === 2, `the commit quick pick lists ${rows.length} rows, expected the 2 commits: ${JSON.stringify(rows)}`);
    subjects.forEach((s, i) => check(new RegExp(`^[0-9a-f]{7,} ${s}$`).test(rows[i].label), `row ${i + 1} of the commit quick pick is not "<sha> ${s}": ${JSON.stringify(rows[i])}`));
    check(rows[0].focused, `the first commit is not the focused row: ${JSON.stringify(rows)}`);
    const head = run('git', ['-C', repo, 'rev-parse', '--short=7', 'HEAD'], 'git rev-parse').trim();
    check(rows[0].label.startsWith(head.slice(0, 7)), `the first row "${rows[0].label}" is not HEAD (${head})`);
    // A click, not Enter: the keyboard focus may still be in the report panel's webview, which the
    // picker was opened from (an Enter there was lost, the picker staying open: 1 run in 5).
    await page.locator(`${sel.quickRows}.focused`).first().click();
    const seen = await waitReviewRan('Review Commit… HEAD', expectedStatus);
    const status = expectedStatus;
    log(`  status bar: ${seen.join(' → ')}`);
    const tFinished = Date.now();
    const scope = `commit ${rows[0].label.split(' ')[0]} "Export reports as zip archives"`;
    const line = await waitSidebarMessage(new RegExp(`^${scope} .* · ${shown.length} findings \\(${status.replace('Redline: ', '').replace(/[()]/g, '\\$&')}\\)$`), 'Review Commit… HEAD');
    log(`  sidebar line: ${line} (${secs(Date.now() - tFinished)} s after the status bar)`);
    // The open report follows the finished review: its tab is now the commit's.
    const tab = page.locator('.tabs-container .tab', { hasText: 'Redline: commit ' }).first();
    await tab.waitFor({ timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Failure(`the report panel did not follow the commit review; tabs ${JSON.stringify(await tabLabels())}`);
    });
    const frame = await waitFrameWith('Redline review: commit', STEP_TIMEOUT, 'the report after Review Commit…');
    const h3 = await frame.evaluate(() => [...document.querySelectorAll('h3')].map((e) => e.innerText.trim()));
    for (const h of h3) log(`  report finding: ${h}`);
    for (const f of shown) check(h3.some((h) => h.includes(`${f.file}:${f.line}`) && h.includes(f.title.replace(/`/g, ''))), `the report of HEAD lacks "${f.file}:${f.line} — ${f.title}": ${JSON.stringify(h3)}`);
    check(h3.length === shown.length, `the report of HEAD lists ${h3.length} findings, expected ${shown.length}: ${JSON.stringify(h3)}`);
    const tree = (await treeRows()).map((x) => x.text);
    for (const x of tree) log(`  sidebar: ${x}`);
    for (const f of shown) check(tree.some((x) => x.startsWith(f.title)), `the sidebar lacks "${f.title}" after reviewing HEAD: ${JSON.stringify(tree)}`);
    pass('Review Commit…', `quick pick lists ${rows.map((x) => `"${x.label}"`).join(', ')}; picked the first; status bar "${status}" (the CLI's review of HEAD: ${cli.findings.length} findings, one of them fixed in the editor earlier); the open report shows "${(await tab.textContent()).trim().slice(0, 60)}…" with those findings`);
    const flicker = transientCounts(seen, status);
    check(flicker.length === 0, `after Review Commit… the status bar showed ${JSON.stringify(flicker)} before "${status}"`);
  });

  await step('Apply Fix from the sidebar context menu', async () => {
    // Only a finding with improved code offers Apply Fix: the mutable default has some, the shell
    // command none (the offline review's bandit/ruff findings).
    const shell = EXPECTED.find((e) => e.key === 'shell injection');
    const target = EXPECTED.find((e) => e.key === 'mutable default');
    const shellMenu = await findingMenu(shell.title);
    log(`  context menu of "${shell.title}": ${JSON.stringify(shellMenu)}`);
    await page.keyboard.press('Escape');
    await page.locator('.context-view .monaco-menu').waitFor({ state: 'detached', timeout: STEP_TIMEOUT }).catch(() => {});
    check(shellMenu.includes('Dismiss…'), `the context menu of "${shell.title}" has no "Dismiss…": ${JSON.stringify(shellMenu)}`);
    check(!shellMenu.includes('Apply Fix'), `the context menu of "${shell.title}" (no fix offered) shows "Apply Fix": ${JSON.stringify(shellMenu)}`);
    // `import os` was removed earlier: the mutable default is one line up.
    const row = (await treeRows()).find((r) => r.text.startsWith(target.title));
    check(row && row.text.includes(`line ${target.line - 1} `), `the sidebar row "${target.title}" is not at line ${target.line - 1}: ${JSON.stringify(row)}`);
    // The editor renders only the lines in view: line 30 is below them, read it from disk (saved).
    const before = readFileSync(path.join(repo, FILE), 'utf-8');
    check(before.split('\n')[target.line - 2] === 'def collect_titles(reports: list[dict], seen=[]) -> list[str]:', `line ${target.line - 1} of ${FILE} is not the mutable default before the fix:\n${before}`);
    const menu = await findingMenu(target.title);
    log(`  context menu of "${target.title}": ${JSON.stringify(menu)}`);
    check(menu.includes('Apply Fix'), `the context menu of "${target.title}" has no "Apply Fix": ${JSON.stringify(menu)}`);
    await chooseMenuItem('Apply Fix');
    // The finding opens in the active editor group (the report panel's, focused since Show Report).
    const activeEditor = `.editor-group-container.active ${sel.editor}`;
    await page.waitForFunction(
      (sel) => [...document.querySelectorAll(sel + ' .view-line')].some((l) => l.textContent.replace(/\u00a0/g, ' ').trim() === 'if seen is None:'),
      `${activeEditor} .view-lines`,
      { timeout: STEP_TIMEOUT },
    ).catch(async () => {
      throw new Failure(`the active editor has no \`if seen is None:\` after Apply Fix:\n${await editorText(activeEditor)}\nnotifications ${JSON.stringify(await toastTexts())}`);
    });
    const text = await editorText(activeEditor);
    log(`  editor after Apply Fix:\n${text.split('\n').filter((l) => /seen/.test(l)).map((l) => `    ${l}`).join('\n')}`);
    check(text.includes('def collect_titles(reports: list[dict], seen=None) -> list[str]:') && !text.includes('seen=[]'), `the mutable default is not \`seen=None\` after Apply Fix:\n${text}`);
    check(text.includes('        seen = []') && text.includes('seen.append(report_title(report))'), `Apply Fix changed more than the default argument:\n${text}`);
    await page.locator(`${sel.sidebar} .monaco-list-row[aria-label]`, { hasText: target.title }).first()
      .waitFor({ state: 'detached', timeout: STEP_TIMEOUT })
      .catch(async () => {
        throw new Failure(`"${target.title}" is still in the sidebar after Apply Fix: ${JSON.stringify((await treeRows()).map((r) => r.text))}`);
      });
    const left = (await treeRows()).map((r) => r.text);
    for (const r of left) log(`  sidebar: ${r}`);
    check(left.some((r) => r.startsWith(shell.title)), `the sidebar lost "${shell.title}" too: ${JSON.stringify(left)}`);
    // Saved (Ctrl+S in the editor the fix opened): the later reviews read the file from disk.
    check(!readFileSync(path.join(repo, FILE), 'utf-8').includes('if seen is None:'), `${FILE} was saved before Ctrl+S`);
    await page.keyboard.press('Control+s');
    const deadline = Date.now() + STEP_TIMEOUT;
    while (!readFileSync(path.join(repo, FILE), 'utf-8').includes('if seen is None:')) {
      check(Date.now() < deadline, `${FILE} on disk has no \`if seen is None:\` after Ctrl+S`);
      await page.waitForTimeout(100);
    }
    const status = await waitStatus(/^Redline: /, STEP_TIMEOUT, 'the counts');
    log(`  status bar: "${status}"`);
    pass('Apply Fix', `"${target.title}": \`seen=[]\` became \`seen=None\` with an \`if seen is None:\` guard in the editor (and, after Ctrl+S, on disk); the row left the sidebar; "${shell.title}" (no improved code) offers ${JSON.stringify(shellMenu)}, no "Apply Fix"`);
  });

  await step('"Redline: Export Report…" as SARIF', async () => {
    const target = path.join(tmp, 'export', 'redline-report.sarif');
    mkdirSync(path.dirname(target), { recursive: true });
    const shown = (await treeRows()).filter((r) => !r.text.startsWith(path.basename(FILE)) && !r.text.startsWith(FILE)).map((r) => r.text);
    await palette('Redline: Export Report…');
    const rows = await waitQuickPick('Export Report');
    log(`  formats: ${rows.map((r) => r.label).join(', ')}`);
    check(rows.some((r) => r.label === 'SARIF'), `the format quick pick has no "SARIF": ${JSON.stringify(rows)}`);
    await page.locator(sel.quickInputBox).fill('SARIF');
    await page.locator(`${sel.quickRows}.focused`, { hasText: 'SARIF' }).waitFor({ timeout: STEP_TIMEOUT });
    await page.keyboard.press('Enter');
    // code-server's save dialog is VS Code's simple file dialog: a quick input holding a path.
    await page.waitForFunction(
      (box) => { const b = document.querySelector(box); return b && b.offsetParent !== null && b.value.endsWith('.sarif'); },
      sel.quickInputBox,
      { timeout: STEP_TIMEOUT },
    ).catch(async () => {
      throw new Failure(`no save dialog with a .sarif path after picking SARIF; quick input ${JSON.stringify(await page.locator(sel.quickInput).innerText().catch(() => ''))}`);
    });
    const proposed = await page.locator(sel.quickInputBox).inputValue();
    const dialogTitle = (await page.locator('.quick-input-widget .quick-input-title').textContent()).trim();
    log(`  save dialog "${dialogTitle}": proposes ${proposed}`);
    await shot('export-save-dialog');
    await page.locator(sel.quickInputBox).fill(target);
    // The dialog follows the typed path into its directory (the list shows its ".." row), then OK.
    await page.locator(sel.quickRows, { hasText: '..' }).first().waitFor({ timeout: STEP_TIMEOUT }).catch(() => {});
    await page.locator('.quick-input-widget .monaco-button', { hasText: 'OK' }).first().click();
    await page.locator(sel.quickInput).waitFor({ state: 'hidden', timeout: 5_000 }).catch(async () => {
      log(`  the save dialog is still open after OK (${JSON.stringify(await page.locator(sel.quickInputBox).inputValue())}): Enter`);
      await page.keyboard.press('Enter');
    });
    const message = await waitToast('Redline: report saved to');
    log(`  notification: ${message ?? 'none'}`);
    check(message && message.includes(target), `no notification "Redline: report saved to ${target}"; notifications ${JSON.stringify(await toastTexts())}; quick input ${JSON.stringify(await page.locator(sel.quickInput).innerText().catch(() => ''))}`);
    check(existsSync(target), `${target} was not written`);
    let sarif;
    try {
      sarif = JSON.parse(readFileSync(target, 'utf-8'));
    } catch (err) {
      throw new Failure(`${target} is not JSON: ${err.message}`);
    }
    check(sarif.version === '2.1.0', `${target} has "version": ${JSON.stringify(sarif.version)}, expected "2.1.0"`);
    const results = (sarif.runs ?? []).flatMap((r) => r.results ?? []);
    const described = results.map((r) => ({
      line: r.locations?.[0]?.physicalLocation?.region?.startLine,
      file: r.locations?.[0]?.physicalLocation?.artifactLocation?.uri,
      text: r.message?.text ?? '',
      suppressed: (r.suppressions ?? []).length > 0,
    }));
    for (const r of described) log(`  SARIF result: ${r.file}:${r.line}${r.suppressed ? ' (suppressed)' : ''} ${r.text.split('\n')[0].slice(0, 90)}`);
    const active = described.filter((r) => !r.suppressed);
    for (const t of shown) check(active.some((r) => t.startsWith(r.text.split('\n')[0].slice(0, 30)) || r.text.includes(t.split(/line \d+/)[0].trim())), `the SARIF has no result for the finding "${t}" the sidebar shows: ${JSON.stringify(described)}`);
    check(active.length === shown.length, `the SARIF has ${active.length} unsuppressed results, the sidebar shows ${shown.length} findings: ${JSON.stringify(shown)} vs ${JSON.stringify(described)}`);
    await page.keyboard.press('Escape'); // the notification toast
    pass('Export Report', `SARIF ${sarif.version} written to ${path.relative(tmp, target)} (the dialog proposed ${proposed}); notification "${message}"; ${active.length} result(s) for the finding(s) the sidebar shows`);
  });

  await step('"Redline: Review Pull Request…" 12 fails, visibly', async () => {
    await recordStatus();
    await palette('Redline: Review Pull Request…');
    const box = page.locator(sel.quickInputBox);
    await page.waitForFunction(() => document.querySelector('.quick-input-widget .quick-input-title')?.textContent.includes('Review Pull Request'), null, { timeout: STEP_TIMEOUT });
    await box.fill('12');
    await page.keyboard.press('Enter');
    const t = Date.now();
    const status = await waitStatus(/^Redline: failed$/, REVIEW_TIMEOUT, '"Redline: failed"');
    const error = await page.locator('.notifications-toasts .notification-list-item', { has: page.locator('.codicon-error') }).first()
      .waitFor({ timeout: STEP_TIMEOUT }).then(() => errorsShown(), () => []);
    log(`  status bar: ${(await statusSeen()).join(' → ')} (${secs(Date.now() - t)} s)`);
    for (const e of error) log(`  error notification: ${e}`);
    check(error.some((e) => /pull request #12/.test(e)), `no error notification that says why pull request #12 could not be reviewed: ${JSON.stringify(error)}`);
    check(error.length === 1, `${error.length} error notifications (the same error shown twice?): ${JSON.stringify(error)}`);
    // The sidebar's line names the review that failed, and says whose list is still shown.
    let line = await sidebarMessage();
    for (const deadline = Date.now() + 5_000; !/^pr 12 failed/.test(line) && Date.now() < deadline; line = await sidebarMessage()) await page.waitForTimeout(100);
    log(`  sidebar line: ${line || '(none)'}`);
    check(/^pr 12 failed · showing /.test(line), `after the failed review the sidebar's line reads "${line}", not "pr 12 failed · showing …"`);
    const tooltip = await page.locator(`${sel.statusbar} .statusbar-item`, { hasText: 'Redline: failed' }).first().locator('a, .statusbar-item-label').first().getAttribute('aria-label').catch(() => null);
    log(`  status bar item: ${tooltip}`);
    await shot('pull-request-failed');
    await palette('Notifications: Clear All Notifications');
    await page.locator('.notifications-toasts .notification-list-item').first().waitFor({ state: 'detached', timeout: STEP_TIMEOUT }).catch(() => {});
    pass('Review Pull Request… failure', `the status bar shows "${status}" and an error notification says "${error[0]}"`);
    // Nothing else broke: the next review runs and finishes.
    await recordStatus();
    await palette('Redline: Review Current Branch');
    await page.waitForFunction(
      ({ bar }) => (window.__redlineStatusSeen ?? []).some((s) => /…$/.test(s)) &&
        [...document.querySelectorAll(bar + ' .statusbar-item')].some((e) => /^Redline: (\d+ ⚠|\d+ ⛔|no findings)/.test(e.textContent.trim())),
      { bar: sel.statusbar },
      { timeout: REVIEW_TIMEOUT, polling: 50 },
    ).catch(async () => {
      throw new Failure(`the review after the failed one did not finish: status bar ${JSON.stringify(await statusSeen())}; errors ${JSON.stringify(await errorsShown())}`);
    });
    const after = await waitStatus(/^Redline: /, STEP_TIMEOUT, 'the counts');
    const tree = (await treeRows()).map((r) => r.text);
    for (const r of tree) log(`  sidebar: ${r}`);
    check(!(await errorsShown()).length, `errors on screen after the next review: ${JSON.stringify(await errorsShown())}`);
    pass('review after the failure', `"Redline: Review Current Branch" ran and finished: "${after}", the sidebar lists ${JSON.stringify(tree)}`);
  });

  let reportSummaryBefore = null;
  await step('the server crashes, the user restarts it', async () => {
    const before = serverProcesses();
    log(`  redline lsp under code-server: ${JSON.stringify(before)}`);
    check(before.length === 1, `expected one \`${redline} lsp\` under code-server, found ${JSON.stringify(before)}`);
    const [pid] = before[0];
    reportSummaryBefore = await ((await frameWith('Redline review:'))?.evaluate(() => document.body.innerText.match(/\d+ findings?: [^.]*\./)?.[0]).catch(() => null)) ?? null;
    check((await page.locator(sel.squiggle).count()) > 0, 'no squiggle before the crash');
    const tKill = Date.now();
    process.kill(pid, 'SIGKILL');
    const toast = page.locator('.notifications-toasts .notification-list-item', { hasText: 'The Redline server stopped unexpectedly.' }).first();
    await toast.waitFor({ timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Failure(`no notification "The Redline server stopped unexpectedly." ${STEP_TIMEOUT / 1000} s after killing ${pid}; notifications ${JSON.stringify(await toastTexts())}; status bar ${JSON.stringify(await statusTexts())}`);
    });
    const dtToast = Date.now() - tKill;
    const message = (await toast.innerText()).replace(/\s+/g, ' ').trim();
    log(`  notification after ${secs(dtToast)} s: ${message}`);
    figures.push(`server killed → "stopped unexpectedly" notification: ${secs(dtToast)} s`);
    console.log(`e2e: server killed → notification: ${secs(dtToast)} s`);
    check(await toast.locator('.codicon-warning, .codicon-notifications-warning').count() > 0, `the notification is not a warning: ${message}`);
    const restart = toast.locator('.monaco-button', { hasText: 'Restart Server' }).first();
    check(await restart.isVisible(), `the notification has no "Restart Server" button: ${message}`);
    check(await toast.locator('.monaco-button', { hasText: 'Show Output' }).count() > 0, `the notification has no "Show Output" button: ${message}`);
    const down = await waitStatus(/^Redline: no server$/, STEP_TIMEOUT, '"Redline: no server"');
    // What the sidebar shows meanwhile: the findings are gone with the server.
    const welcome = await page.locator(`${sel.sidebar} .welcome-view-content`).first().innerText({ timeout: 5_000 }).then((t) => t.replace(/\s+/g, ' ').trim(), () => '');
    log(`  sidebar: ${welcome || JSON.stringify((await treeRows()).map((r) => r.text))}`);
    check(/not running/.test(welcome), `the sidebar does not say the server is not running: "${welcome}" ${JSON.stringify((await treeRows()).map((r) => r.text))}`);
    log(`  squiggles while the server is down: ${JSON.stringify(await squiggleLines())}`);
    await shot('server-stopped');
    await recordStatus();
    const tRestart = Date.now();
    await restart.click();
    await toast.waitFor({ state: 'detached', timeout: STEP_TIMEOUT }).catch(() => {});
    const idle = await waitStatus(/^Redline$/, STEP_TIMEOUT, 'the idle "Redline" after the restart');
    const dtIdle = Date.now() - tRestart;
    log(`  status bar: ${(await statusSeen()).join(' → ')} (idle after ${secs(dtIdle)} s)`);
    const after = serverProcesses();
    check(after.length === 1 && after[0][0] !== pid, `expected one new \`redline lsp\` after the restart, found ${JSON.stringify(after)}`);
    pass('server crash', `killed ${pid}: warning "${message}" after ${secs(dtToast)} s; the status bar "${down}"; "Restart Server" → "${idle}" after ${secs(dtIdle)} s (new server ${after[0][0]})`);
    await recordStatus();
    await palette('Redline: Review Current Branch');
    try {
      await page.waitForFunction((squiggle) => document.querySelector(squiggle), sel.squiggle, { timeout: REVIEW_TIMEOUT, polling: 20 });
    } catch {
      throw new Failure(`no squiggle after the restart and "Review Current Branch"; status bar ${JSON.stringify(await statusSeen())}; errors ${JSON.stringify(await errorsShown())}`);
    }
    const dtSquiggle = Date.now() - tRestart;
    figures.push(`"Restart Server" → first squiggle (with the palette's Review Current Branch): ${secs(dtSquiggle)} s`);
    console.log(`e2e: Restart Server → first squiggle: ${secs(dtSquiggle)} s`);
    const status = await waitStatus(/^Redline: (\d+ ⚠|\d+ ⛔|no findings)/, REVIEW_TIMEOUT, 'the counts after the restart');
    const lines = await squiggleLines();
    // The sidebar follows the status bar a moment later.
    await page.locator(`${sel.sidebar} .monaco-list-row[aria-label]`, { hasText: EXPECTED[1].title }).first().waitFor({ timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Failure(`the sidebar lacks "${EXPECTED[1].title}" after the restart: ${JSON.stringify((await treeRows()).map((r) => r.text))}`);
    });
    const tree = (await treeRows()).map((r) => r.text);
    for (const r of tree) log(`  sidebar: ${r}`);
    log(`  squiggles: ${JSON.stringify(lines)}; status bar ${status}`);
    // The report panel (open since Show Report) follows the review: does it count what the sidebar lists?
    const shownCount = tree.filter((r) => /line \d+/.test(r)).length;
    const summary = async () => ((await frameWith('Redline review:'))?.evaluate(() => document.body.innerText.match(/\d+ findings?: [^.]*\./)?.[0]).catch(() => null)) ?? null;
    const summaryBefore = reportSummaryBefore;
    let reportSummary = await summary();
    const agrees = (text) => !!text && text.startsWith(`${shownCount} finding`);
    for (const deadline = Date.now() + 5_000; !agrees(reportSummary) && Date.now() < deadline; reportSummary = await summary()) await page.waitForTimeout(100);
    log(`  report panel: "${reportSummary}" (before the crash: "${summaryBefore}")`);
    // The fixes were saved, not committed: the new server's branch review finds them again in
    // the commits, but the report, like the sidebar, leaves out what is no longer in the file.
    check(agrees(reportSummary), `the report panel says "${reportSummary}", the sidebar lists ${shownCount} (before the crash the report said "${summaryBefore}")`);
    pass('review after the restart', `"Review Current Branch": squiggles at ${lines.map((l) => `line ${l.line} ${l.kind}`).join(', ')} ${secs(dtSquiggle)} s after "Restart Server"; status bar "${status}"`);
  });

  await step('"Redline: Open User Configuration" creates and opens config.toml', async () => {
    const configFile = env.REDLINE_CONFIG;
    check(!existsSync(configFile) && !existsSync(path.dirname(configFile)), `${configFile} exists before the command`);
    // The user's own configuration (outside the temporary directory) must not be touched.
    const realConfigHome = process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
    const realConfig = [process.env.REDLINE_CONFIG, path.join(realConfigHome, 'redline', 'config.toml')].filter(Boolean);
    const before = realConfig.map((f) => (existsSync(f) ? readFileSync(f, 'utf-8') : null));
    await palette('Redline: Open User Configuration');
    const tab = page.locator('.tabs-container .tab.active', { hasText: 'config.toml' }).first();
    await tab.waitFor({ timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Failure(`no active editor tab config.toml; tabs ${JSON.stringify(await tabLabels())}; errors ${JSON.stringify(await errorsShown())}`);
    });
    await page.locator(`${sel.editor} .view-lines`, { hasText: '# Redline configuration.' }).first().waitFor({ timeout: STEP_TIMEOUT }).catch(() => {
      throw new Failure('the config.toml editor does not show the template ("# Redline configuration.")');
    });
    check(existsSync(configFile), `${configFile} was not created`);
    const text = readFileSync(configFile, 'utf-8');
    check(text.startsWith('# Redline configuration.') && /^# model = /m.test(text) && /^\[models\]/m.test(text), `${configFile} is not the commented template with [models] and "# model = ":\n${text}`);
    check(!/^\s*model\s*=/m.test(text), `the template sets a model (it must only mention it in a comment):\n${text}`);
    const toast = page.locator('.notifications-toasts .notification-list-item', { hasText: 'Redline: created' }).first();
    const message = await toast.waitFor({ timeout: STEP_TIMEOUT }).then(() => toast.innerText(), () => null);
    log(`  notification: ${message ? message.replace(/\s+/g, ' ') : 'none'}`);
    check(message && message.includes(configFile), `no notification "Redline: created ${configFile}"`);
    const after = realConfig.map((f) => (existsSync(f) ? readFileSync(f, 'utf-8') : null));
    check(JSON.stringify(before) === JSON.stringify(after), `a configuration outside the temporary directory changed: ${realConfig.join(', ')}`);
    const written = run('find', [tmp, '-newer', path.join(repo, '.redline', 'dismissed.toml'), '-name', 'config.toml'], 'find').trim().split('\n').filter(Boolean);
    check(written.length === 1 && written[0] === configFile, `config.toml files written: ${JSON.stringify(written)}, expected ${configFile} only`);
    await page.keyboard.press('Escape'); // the notification toast
    pass('Open User Configuration', `created ${path.relative(tmp, configFile)} in the temporary directory (the commented template, "# model = …"), opened it in an editor tab, told the user; ${realConfig.join(', ')} untouched`);
  });

  await step('no error on screen', async () => {
    const errors = await errorsShown();
    check(!errors.length, `error dialogs or notifications on screen: ${JSON.stringify(errors)}`);
    pass('no error on screen', 'no error dialog or error notification at the end of the run');
  });
}

// ---------------------------------------------------------------------------- run, clean up

async function cleanup() {
  if (browser) await Promise.race([browser.close().catch(() => {}), new Promise((r) => setTimeout(r, 5000))]);
  if (codeServer && codeServer.exitCode === null) {
    // The whole process group: code-server, its extension host and the `redline lsp` it started.
    try {
      process.kill(-codeServer.pid, 'SIGTERM');
    } catch {}
    const deadline = Date.now() + 3000;
    while (codeServer.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    try {
      process.kill(-codeServer.pid, 'SIGKILL');
    } catch {}
  }
}

function saveLogs() {
  try {
    if (existsSync(serverLog)) cpSync(serverLog, path.join(artifacts, 'code-server.log'));
    const logs = path.join(userData, 'logs');
    if (existsSync(logs)) cpSync(logs, path.join(artifacts, 'vscode-logs'), { recursive: true });
  } catch {}
}

// One way out, whoever gets there first (the test, its failure, the overall timeout).
let exiting = null;
function exit(code) {
  exiting ??= (async () => {
    await cleanup();
    if (!opts.keep) rmSync(tmp, { recursive: true, force: true });
    else log(`kept ${tmp}`);
    process.exit(code);
  })();
  return exiting;
}

let timedOut = false;
const timer = setTimeout(async () => {
  timedOut = true;
  console.error(`e2e: FAILED — the overall timeout of ${opts.timeout} s was exceeded in step ${stepNo}; killing code-server and Chromium`);
  await shot('TIMEOUT');
  saveLogs();
  console.error(`e2e: screenshots in ${stepsDir}; code-server log and VS Code logs in ${artifacts}`);
  await exit(2);
}, Number(opts.timeout) * 1000);

try {
  await main();
  clearTimeout(timer);
  console.log('e2e: summary');
  for (const r of results) console.log(`  PASS ${r.check}: ${r.detail}`);
  for (const f of figures) console.log(`  ${f}`);
  console.log(`  total: ${secs(Date.now() - started)} s; screenshots: ${path.join(artifacts, 'sidebar.png')}, ${path.join(artifacts, 'report.png')}`);
  await exit(0);
} catch (err) {
  if (!timedOut) {
    clearTimeout(timer);
    console.error(`e2e: FAILED in step "${err.step ?? '?'}": ${err instanceof Failure ? err.message : err.stack}`);
    saveLogs();
    console.error(`e2e: screenshots in ${stepsDir}; code-server log and VS Code logs in ${artifacts}`);
    await exit(1);
  }
}
