// When things go wrong: a review that cannot run (a pull request with no way to fetch it), the
// server killed under the extension and restarted by the user, and, at the end, no error left
// on screen.

import { EXPECTED } from '../demo.mjs';
import { check, Failure, log, secs, STEP_TIMEOUT, REVIEW_TIMEOUT } from '../steps.mjs';
import { errorsShown, palette, statusTexts, waitStatus, squiggleLines, treeRows, toastTexts, recordStatus, statusSeen, frameWith, sidebarMessage, sel } from '../workbench.mjs';

// Review Pull Request… 12 fails visibly; then the server crash and Restart Server.
export async function failedReviewAndCrash(ctx) {
  const { page, redline } = ctx;
  const { step, pass, shot, figures } = ctx.steps;
  const { serverProcesses } = ctx.harness;

  await step('"Redline: Review Pull Request…" 12 fails, visibly', async () => {
    await recordStatus(page);
    await palette(page, 'Redline: Review Pull Request…');
    const box = page.locator(sel.quickInputBox);
    await page.waitForFunction(() => document.querySelector('.quick-input-widget .quick-input-title')?.textContent.includes('Review Pull Request'), null, { timeout: STEP_TIMEOUT });
    await box.fill('12');
    await page.keyboard.press('Enter');
    const t = Date.now();
    const status = await waitStatus(page, /^Redline: failed$/, REVIEW_TIMEOUT, '"Redline: failed"');
    const error = await page.locator('.notifications-toasts .notification-list-item', { has: page.locator('.codicon-error') }).first()
      .waitFor({ timeout: STEP_TIMEOUT }).then(() => errorsShown(page), () => []);
    log(`  status bar: ${(await statusSeen(page)).join(' → ')} (${secs(Date.now() - t)} s)`);
    for (const e of error) log(`  error notification: ${e}`);
    check(error.some((e) => /pull request #12/.test(e)), `no error notification that says why pull request #12 could not be reviewed: ${JSON.stringify(error)}`);
    check(error.length === 1, `${error.length} error notifications (the same error shown twice?): ${JSON.stringify(error)}`);
    // The sidebar's line names the review that failed, and says whose list is still shown.
    let line = await sidebarMessage(page);
    for (const deadline = Date.now() + 5_000; !/^pr 12 failed/.test(line) && Date.now() < deadline; line = await sidebarMessage(page)) await page.waitForTimeout(100);
    log(`  sidebar line: ${line || '(none)'}`);
    check(/^pr 12 failed · showing /.test(line), `after the failed review the sidebar's line reads "${line}", not "pr 12 failed · showing …"`);
    const tooltip = await page.locator(`${sel.statusbar} .statusbar-item`, { hasText: 'Redline: failed' }).first().locator('a, .statusbar-item-label').first().getAttribute('aria-label').catch(() => null);
    log(`  status bar item: ${tooltip}`);
    await shot('pull-request-failed');
    await palette(page, 'Notifications: Clear All Notifications');
    await page.locator('.notifications-toasts .notification-list-item').first().waitFor({ state: 'detached', timeout: STEP_TIMEOUT }).catch(() => {});
    pass('Review Pull Request… failure', `the status bar shows "${status}" and an error notification says "${error[0]}"`);
    // Nothing else broke: the next review runs and finishes.
    await recordStatus(page);
    await palette(page, 'Redline: Review Current Branch');
    await page.waitForFunction(
      ({ bar }) => (window.__redlineStatusSeen ?? []).some((s) => /…$/.test(s)) &&
        [...document.querySelectorAll(bar + ' .statusbar-item')].some((e) => /^Redline: (\d+ ⛔|\d+ ⚠|\d+ ℹ|no findings|no problems)/.test(e.textContent.trim())),
      { bar: sel.statusbar },
      { timeout: REVIEW_TIMEOUT, polling: 50 },
    ).catch(async () => {
      throw new Failure(`the review after the failed one did not finish: status bar ${JSON.stringify(await statusSeen(page))}; errors ${JSON.stringify(await errorsShown(page))}`);
    });
    const after = await waitStatus(page, /^Redline: /, STEP_TIMEOUT, 'the counts');
    const tree = (await treeRows(page)).map((r) => r.text);
    for (const r of tree) log(`  sidebar: ${r}`);
    check(!(await errorsShown(page)).length, `errors on screen after the next review: ${JSON.stringify(await errorsShown(page))}`);
    pass('review after the failure', `"Redline: Review Current Branch" ran and finished: "${after}", the sidebar lists ${JSON.stringify(tree)}`);
  });

  let reportSummaryBefore = null;
  await step('the server crashes, the user restarts it', async () => {
    const before = serverProcesses(redline);
    log(`  redline lsp under code-server: ${JSON.stringify(before)}`);
    check(before.length === 1, `expected one \`${redline} lsp\` under code-server, found ${JSON.stringify(before)}`);
    const [pid] = before[0];
    reportSummaryBefore = await ((await frameWith(page, 'Redline review:'))?.evaluate(() => document.body.innerText.match(/\d+ findings?: [^.]*\./)?.[0]).catch(() => null)) ?? null;
    check((await page.locator(sel.squiggle).count()) > 0, 'no squiggle before the crash');
    const tKill = Date.now();
    process.kill(pid, 'SIGKILL');
    const toast = page.locator('.notifications-toasts .notification-list-item', { hasText: 'The Redline server stopped unexpectedly.' }).first();
    await toast.waitFor({ timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Failure(`no notification "The Redline server stopped unexpectedly." ${STEP_TIMEOUT / 1000} s after killing ${pid}; notifications ${JSON.stringify(await toastTexts(page))}; status bar ${JSON.stringify(await statusTexts(page))}`);
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
    const down = await waitStatus(page, /^Redline: no server$/, STEP_TIMEOUT, '"Redline: no server"');
    // What the sidebar shows meanwhile: the findings are gone with the server.
    const welcome = await page.locator(`${sel.sidebar} .welcome-view-content`).first().innerText({ timeout: 5_000 }).then((t) => t.replace(/\s+/g, ' ').trim(), () => '');
    log(`  sidebar: ${welcome || JSON.stringify((await treeRows(page)).map((r) => r.text))}`);
    check(/not running/.test(welcome), `the sidebar does not say the server is not running: "${welcome}" ${JSON.stringify((await treeRows(page)).map((r) => r.text))}`);
    log(`  squiggles while the server is down: ${JSON.stringify(await squiggleLines(page))}`);
    await shot('server-stopped');
    await recordStatus(page);
    const tRestart = Date.now();
    await restart.click();
    await toast.waitFor({ state: 'detached', timeout: STEP_TIMEOUT }).catch(() => {});
    const idle = await waitStatus(page, /^Redline$/, STEP_TIMEOUT, 'the idle "Redline" after the restart');
    const dtIdle = Date.now() - tRestart;
    log(`  status bar: ${(await statusSeen(page)).join(' → ')} (idle after ${secs(dtIdle)} s)`);
    const after = serverProcesses(redline);
    check(after.length === 1 && after[0][0] !== pid, `expected one new \`redline lsp\` after the restart, found ${JSON.stringify(after)}`);
    pass('server crash', `killed ${pid}: warning "${message}" after ${secs(dtToast)} s; the status bar "${down}"; "Restart Server" → "${idle}" after ${secs(dtIdle)} s (new server ${after[0][0]})`);
    await recordStatus(page);
    await palette(page, 'Redline: Review Current Branch');
    try {
      await page.waitForFunction((squiggle) => document.querySelector(squiggle), sel.squiggle, { timeout: REVIEW_TIMEOUT, polling: 20 });
    } catch {
      throw new Failure(`no squiggle after the restart and "Review Current Branch"; status bar ${JSON.stringify(await statusSeen(page))}; errors ${JSON.stringify(await errorsShown(page))}`);
    }
    const dtSquiggle = Date.now() - tRestart;
    figures.push(`"Restart Server" → first squiggle (with the palette's Review Current Branch): ${secs(dtSquiggle)} s`);
    console.log(`e2e: Restart Server → first squiggle: ${secs(dtSquiggle)} s`);
    const status = await waitStatus(page, /^Redline: (\d+ ⛔|\d+ ⚠|\d+ ℹ|no findings|no problems)/, REVIEW_TIMEOUT, 'the counts after the restart');
    const lines = await squiggleLines(page);
    // The sidebar follows the status bar a moment later.
    await page.locator(`${sel.sidebar} .monaco-list-row[aria-label]`, { hasText: EXPECTED[1].title }).first().waitFor({ timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Failure(`the sidebar lacks "${EXPECTED[1].title}" after the restart: ${JSON.stringify((await treeRows(page)).map((r) => r.text))}`);
    });
    const tree = (await treeRows(page)).map((r) => r.text);
    for (const r of tree) log(`  sidebar: ${r}`);
    log(`  squiggles: ${JSON.stringify(lines)}; status bar ${status}`);
    // The report panel (open since Show Report) follows the review: does it count what the sidebar lists?
    const shownCount = tree.filter((r) => /line \d+/.test(r)).length;
    const summary = async () => ((await frameWith(page, 'Redline review:'))?.evaluate(() => document.body.innerText.match(/\d+ findings?: [^.]*\./)?.[0]).catch(() => null)) ?? null;
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
}

// The last step: the failed review's notification was cleared, nothing else may show.
export async function noErrorLeftOnScreen(ctx) {
  const { page } = ctx;
  const { step, pass } = ctx.steps;

  await step('no error on screen', async () => {
    const errors = await errorsShown(page);
    check(!errors.length, `error dialogs or notifications on screen: ${JSON.stringify(errors)}`);
    pass('no error on screen', 'no error dialog or error notification at the end of the run');
  });
}
