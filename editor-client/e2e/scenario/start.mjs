// Before the user does anything: the demo repository and the CLI's review of it (the ids the
// editor must show), code-server with the extension, and Chromium on the folder.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { buildDemoRepo, cliReview, EXPECTED, FILE } from '../demo.mjs';
import { freePort } from '../harness.mjs';
import { check, Failure, log } from '../steps.mjs';
import { sel } from '../workbench.mjs';

// What the run needs is there (and says how to get it otherwise).
export function checkPrerequisites(ctx) {
  const { vsix, redline, root, here } = ctx;
  const { codeServerBin } = ctx.harness;
  log(`temporary directory ${ctx.tmp}`);
  check(existsSync(vsix), `no extension package at ${vsix} (make vsix)`);
  check(existsSync(redline), `no redline at ${redline} (make setup)`);
  check(existsSync(codeServerBin), `no code-server at ${codeServerBin} (make ${path.relative(root, here)}/node_modules/.install-stamp)`);
  check(Number(process.versions.node.split('.')[0]) >= 20, `Node ${process.version}: run with editor-client/e2e/node_modules/node/bin/node (v24)`);
  // The package carries Redline's own wheel (the extension installs the server from it).
  const bundled = spawnSync(path.join(root, '.venv', 'bin', 'python'), [path.join(root, 'scripts', 'check_vsix.py'), vsix], { encoding: 'utf-8' });
  check(bundled.status === 0, `the extension package lacks Redline's wheel: ${bundled.stderr || bundled.error}`);
  log(bundled.stdout.trim());
}

// Steps 1–3. Sets ctx.ids (the CLI's finding id of each EXPECTED key) and ctx.page.
export async function start(ctx) {
  const { repo, redline, vsix, opts, harness } = ctx;
  const { step } = ctx.steps;

  ctx.ids = await step('build the demo repository and review it with the CLI (finding ids)', async () => {
    buildDemoRepo(ctx);
    // The CLI's own offline review of the same change: the ids the editor must show (and write
    // to dismissed.toml).
    const { findings } = cliReview(ctx, ['--branch', 'main'], 'redline review failed');
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
    harness.writeSettings(redline, { serverPathInUserSettingsOnly: opts['server-path-in-user-settings-only'] });
    const out = harness.installExtension(vsix);
    log(`  ${out.trim().split('\n').pop()}`);
    await harness.startCodeServer(port, repo);
  });

  await step('open the folder in Chromium', async () => {
    ctx.page = await harness.openChromium({ executablePath: opts.chromium, headed: opts.headed });
    const { page } = ctx;
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURI(repo)}`);
    await page.locator(sel.workbench).waitFor({ timeout: 60_000 });
    await page.locator(`${sel.sidebar} .monaco-list-row[aria-label]`, { hasText: 'app' }).first().waitFor({ timeout: 60_000 });
    // Workspace trust is on and the folder is not trusted: everything after runs in Restricted
    // Mode, where a reviewer opens a stranger's pull request.
    await page.waitForFunction(() => /Restricted Mode/.test(document.title) ||
      [...document.querySelectorAll('.statusbar-item')].some((e) => /Restricted Mode/.test(e.textContent + (e.getAttribute('aria-label') ?? ''))),
    null, { timeout: 30_000 }).catch(async () => {
      throw new Failure(`the window is not in Restricted Mode: title "${await page.title()}"`);
    });
    ctx.steps.pass('Restricted Mode', `workspace trust on, the folder untrusted: "${await page.title()}"`);
  });
}
