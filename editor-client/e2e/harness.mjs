// The machinery around the test: a fresh temporary directory and an environment that points
// every user directory into it, a free port, code-server (settings, the extension, the server
// process) and Chromium, the logs kept on failure, the overall timeout, and the one way out that
// kills whatever was started.

import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { check, Failure, log, STEP_TIMEOUT } from './steps.mjs';

// What VS Code must not do in a test: open walkthroughs, tips, chat, update checks, previews
// (a preview tab is replaced by the next file opened), autosave (the test saves with Ctrl+S).
// Workspace trust is on, and the folder opens in Restricted Mode (no startup prompt: the folder is
// untrusted): where a reviewer opens a stranger's pull request, the extension must work.
const SETTINGS = {
  'security.workspace.trust.enabled': true,
  'security.workspace.trust.startupPrompt': 'never',
  'security.workspace.trust.banner': 'never',
  'security.workspace.trust.untrustedFiles': 'open',
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
};

// The environment of everything the test starts: the user's REDLINE_* and VSCODE_* left out,
// HOME and the XDG directories in `tmp` (created), git blind to the user's configuration. The
// user's Redline configuration is the default one under XDG_CONFIG_HOME (`userConfigFile`): it
// does not exist yet, and "Redline: Open User Configuration" creates it (a REDLINE_CONFIG naming
// a missing file would be an error).
export function userConfigFile(env) {
  return path.join(env.XDG_CONFIG_HOME, 'redline', 'config.toml');
}

function isolatedEnv(tmp) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('REDLINE_') && !k.startsWith('VSCODE_')));
  Object.assign(env, {
    HOME: path.join(tmp, 'home'),
    XDG_CONFIG_HOME: path.join(tmp, 'config'),
    XDG_CACHE_HOME: path.join(tmp, 'cache'),
    XDG_DATA_HOME: path.join(tmp, 'data'),
    XDG_STATE_HOME: path.join(tmp, 'state'),
    REDLINE_CACHE_DIR: path.join(tmp, 'redline-cache'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    // code-server and its extension host run on the Node this script runs on (Node 24).
    PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`,
  });
  for (const k of ['HOME', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME']) mkdirSync(env[k], { recursive: true });
  return env;
}

export function freePort() {
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

// `here`: editor-client/e2e (code-server is in its node_modules); `artifacts`: emptied now, the
// screenshots and logs of this run go there; `keep`: leave the temporary directory behind.
export function createHarness({ here, artifacts, keep }) {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'redline-e2e-'));
  const stepsDir = path.join(artifacts, 'steps');
  rmSync(artifacts, { recursive: true, force: true });
  mkdirSync(stepsDir, { recursive: true });
  const env = isolatedEnv(tmp);
  const userData = path.join(tmp, 'user-data');
  const extensions = path.join(tmp, 'extensions');
  const serverLog = path.join(tmp, 'code-server.log');
  const codeServerBin = path.join(here, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  let codeServer = null;
  let browser = null;
  const services = []; // helper processes a scenario started (the scripted models), with their logs

  function run(cmd, args, what) {
    const r = spawnSync(cmd, args, { env, encoding: 'utf-8', timeout: 120_000 });
    if (r.status !== 0) throw new Failure(`${what} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout}`);
    return r.stdout;
  }

  // The User settings, with `redline` as the server; and, unless `serverPathInUserSettingsOnly`,
  // redline.server.path in the Remote settings too. It has scope machine: VS Code reads such
  // settings from the machine's own settings in a remote window, and code-server's window is
  // one — its "Remote" settings file is <user-data-dir>/Machine/settings.json ("Preferences:
  // Open Remote Settings").
  function writeSettings(redline, { serverPathInUserSettingsOnly }) {
    mkdirSync(path.join(userData, 'User'), { recursive: true });
    // redline.server.path: a user (machine) setting, never read from the workspace.
    const user = { ...SETTINGS, 'redline.server.path': redline };
    writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify(user, null, 2));
    mkdirSync(path.join(userData, 'Machine'), { recursive: true });
    if (!serverPathInUserSettingsOnly) writeFileSync(path.join(userData, 'Machine', 'settings.json'), JSON.stringify({ 'redline.server.path': redline }, null, 2));
  }

  // code-server's own output of the install (its last line says which version went in).
  function installExtension(vsix) {
    return run(process.execPath, [codeServerBin, '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', vsix], 'code-server --install-extension');
  }

  // code-server on 127.0.0.1:`port` with `folder` open, in its own process group (so that the
  // extension host and `redline lsp` go with it); returns when it answers /healthz.
  async function startCodeServer(port, folder) {
    const fd = openSync(serverLog, 'a');
    codeServer = spawn(
      process.execPath,
      [codeServerBin, '--auth', 'none', '--disable-telemetry', '--disable-update-check', '--bind-addr', `127.0.0.1:${port}`, '--user-data-dir', userData, '--extensions-dir', extensions, folder],
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
  }

  // A new page of a fresh Chromium, at a size where the whole demo file fits in the editor.
  async function openChromium({ executablePath, headed }) {
    browser = await chromium.launch({
      executablePath,
      headless: !headed,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
    });
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    return context.newPage();
  }

  // The `<redline> lsp` processes started under code-server (its descendants), as [pid, args].
  function serverProcesses(redline) {
    const ps = spawnSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf-8' }).stdout.trim().split('\n');
    const procs = ps.map((l) => l.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/)).filter(Boolean).map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
    const parent = new Map(procs.map((p) => [p.pid, p.ppid]));
    const under = (pid) => {
      for (let p = parent.get(pid), n = 0; p && n < 50; p = parent.get(p), n++) if (p === codeServer.pid) return true;
      return false;
    };
    return procs.filter((p) => (p.args === `${redline} lsp` || p.args.endsWith(` ${redline} lsp`)) && under(p.pid)).map((p) => [p.pid, p.args]);
  }

  // A helper process for the rest of the run (its own process group, its output in `<name>.log`
  // of the temporary directory, saved with the logs); killed with code-server at the end.
  function startService(name, cmd, args) {
    const logFile = path.join(tmp, `${name}.log`);
    const fd = openSync(logFile, 'a');
    const child = spawn(cmd, args, { env, stdio: ['ignore', fd, fd], detached: true });
    services.push({ child, logFile });
    return { child, logFile };
  }

  async function cleanup() {
    for (const { child } of services) {
      try {
        if (child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
      } catch {}
    }
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

  // The code-server log and VS Code's logs (the extension's output among them) into artifacts.
  function saveLogs() {
    try {
      if (existsSync(serverLog)) cpSync(serverLog, path.join(artifacts, 'code-server.log'));
      for (const { logFile } of services) if (existsSync(logFile)) cpSync(logFile, path.join(artifacts, path.basename(logFile)));
      const logs = path.join(userData, 'logs');
      if (existsSync(logs)) cpSync(logs, path.join(artifacts, 'vscode-logs'), { recursive: true });
    } catch {}
  }

  // One way out, whoever gets there first (the test, its failure, the overall timeout).
  let exiting = null;
  function exit(code) {
    exiting ??= (async () => {
      await cleanup();
      if (!keep) rmSync(tmp, { recursive: true, force: true });
      else log(`kept ${tmp}`);
      process.exit(code);
    })();
    return exiting;
  }

  // `onTimeout` after `seconds`, unless disarmed; `fired()` says whether it did (the test's own
  // failure is then not reported: the timeout is on its way out).
  function overallTimeout(seconds, onTimeout) {
    let fired = false;
    const timer = setTimeout(() => {
      fired = true;
      onTimeout();
    }, seconds * 1000);
    return { disarm: () => clearTimeout(timer), fired: () => fired };
  }

  return { tmp, env, stepsDir, codeServerBin, run, writeSettings, installExtension, startCodeServer, openChromium, serverProcesses, startService, saveLogs, exit, overallTimeout };
}
