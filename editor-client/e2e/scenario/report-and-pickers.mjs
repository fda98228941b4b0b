// The review's report and the other scopes: the report panel, the branch and commit pickers and
// the reviews they start, and Export Report… as SARIF through code-server's save dialog.

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { cliReview, DIFF_SUMMARY, EXPECTED, FILE, POLYGLOT, statusFor } from '../demo.mjs';
import { check, Failure, log, secs, STEP_TIMEOUT } from '../steps.mjs';
import { palette, treeRows, waitToast, toastTexts, waitQuickPick, recordStatus, waitReviewRan, waitFrameWith, waitSidebarMessage, tabLabels, sel, transientCounts } from '../workbench.mjs';

// Show Report, then Review Branch Against… main and Review Commit… HEAD (the open report follows).
export async function reportAndPickers(ctx) {
  const { page, ids, repo, artifacts } = ctx;
  const { step, pass, shot, figures } = ctx.steps;
  const { run } = ctx.harness;

  await step('"Redline: Show Report" opens the report panel', async () => {
    const t = await palette(page, 'Redline: Show Report');
    // Content first (what the user waits for), then the panel's title and the report's text.
    let tabAt = null;
    void page.locator('.tabs-container .tab', { hasText: 'Redline: ' }).first().waitFor({ timeout: STEP_TIMEOUT }).then(() => (tabAt = Date.now()), () => {});
    const frame = await waitFrameWith(page, 'Redline review:', STEP_TIMEOUT, 'Show Report');
    const dt = Date.now() - t;
    log(`  the panel's tab showed ${tabAt ? `${secs(tabAt - t)} s` : 'not yet'}, its content ${secs(dt)} s after Enter`);
    figures.push(`palette → report panel content: ${secs(dt)} s`);
    console.log(`e2e: palette → report panel content: ${secs(dt)} s`);
    const tab = page.locator('.tabs-container .tab', { hasText: 'Redline: branch feature/export vs main' }).first();
    await tab.waitFor({ timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Failure(`no editor tab "Redline: branch feature/export vs main …"; tabs ${JSON.stringify(await tabLabels(page))}`);
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
    // The findings left: the report lists each under a "### `file:line` — title" heading, at
    // the line the editor shows it on now (the quick fix removed line 4 above both).
    for (const key of ['shell injection', 'mutable default']) {
      const e = EXPECTED.find((x) => x.key === key);
      const now = e.line - 1;
      check(report.h3.some((h) => h.includes(`${FILE}:${now}`) && h.includes(e.title)), `the report has no finding "${FILE}:${now} — ${e.title}": ${JSON.stringify(report.h3)}`);
    }
    // Dismissed and fixed since the review: not among the findings (the Markdown report has no
    // "dismissed" section: it leaves them out entirely), and the summary counts what is left.
    for (const key of ['bare except', 'unused import']) {
      const e = EXPECTED.find((x) => x.key === key);
      const plain = e.title.replace(/`/g, '');
      check(!report.h3.some((h) => h.includes(plain)), `the report still lists the ${key === 'bare except' ? 'dismissed' : 'fixed'} finding "${e.title}": ${JSON.stringify(report.h3)}`);
      check(!report.text.includes(plain), `the report still mentions the ${key === 'bare except' ? 'dismissed' : 'fixed'} finding "${e.title}"`);
    }
    // The other languages' findings, at their lines (no edit there).
    for (const e of POLYGLOT) {
      const plain = e.title.replace(/`/g, '');
      check(report.h3.some((h) => h.includes(`${e.file}:${e.line}`) && h.includes(plain)), `the report has no finding "${e.file}:${e.line} — ${e.title}": ${JSON.stringify(report.h3)}`);
    }
    const left = 2 + POLYGLOT.length;
    check(report.h3.length === left, `the report lists ${report.h3.length} findings, expected the ${left} left: ${JSON.stringify(report.h3)}`);
    check(/7 findings: 1 Critical, 2 High, 2 Medium, 2 Low\./.test(report.text), `the report's summary line does not count the ${left} findings left: ${report.text.split('\n').slice(0, 4).join(' | ')}`);
    check(report.h1.includes(DIFF_SUMMARY), `the report's title does not say "${DIFF_SUMMARY}": ${report.h1}`);
    // The coverage: what was reviewed and what was skipped (the lockfile), with why.
    check(report.h2.includes('Coverage'), `the report has no Coverage section: ${JSON.stringify(report.h2)}`);
    const coverage = report.text.slice(report.text.lastIndexOf('Coverage'));
    // The lockfile is skipped; README.md, which no analyzer reads and no model saw, is listed as
    // not reviewed (never under Reviewed).
    check(/Skipped: 2\b/.test(coverage) && /poetry\.lock: lockfile/.test(coverage), `the coverage does not name the skipped poetry.lock:\n${coverage}`);
    check(/README\.md: not reviewed: no analyzer for Markdown/.test(coverage) && !/Reviewed:[^\n]*README/.test(coverage), `the coverage does not list README.md as not reviewed:\n${coverage}`);
    check(coverage.includes(FILE), `the coverage does not list ${FILE} as reviewed:\n${coverage}`);
    // Each analyzer that ran is named with its version, files and findings.
    for (const tool of ['ruff', ...POLYGLOT.map((e) => e.analyzer)]) {
      check(new RegExp(`${tool} [0-9][^:]*: ok, \\d+ files?, [1-9]\\d* findings?`).test(coverage), `the coverage does not say ${tool} ran and found something:\n${coverage}`);
    }
    await page.mouse.move(900, 300);
    await page.screenshot({ path: path.join(artifacts, 'report.png') });
    pass('Show Report', `panel "${title.slice(0, 60)}…" shows ${report.h3.length} findings (${report.h3.map((h) => h.replace(/^.* — /, '')).join('; ')}), the coverage with the skipped poetry.lock and README.md not reviewed, not the dismissed "Bare \`except\`" nor the fixed "Unused import \`os\`"`);
  });

  await step('"Redline: Review Branch Against…": pick main', async () => {
    await recordStatus(page);
    await palette(page, 'Redline: Review Branch Against…');
    const rows = await waitQuickPick(page, 'Review feature/export against');
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
    // `import os` fixed, the bare except dismissed: 7 findings left, "Redline: 3 ⛔ 2 ⚠ 2 ℹ".
    const left = [...EXPECTED.filter((e) => e.key !== 'unused import' && e.key !== 'bare except'), ...POLYGLOT];
    const status = statusFor(left.map((e) => e.severity));
    const seen = await waitReviewRan(page, 'Review Branch Against… main', status);
    log(`  status bar: ${seen.join(' → ')}`);
    const line = await waitSidebarMessage(page, new RegExp(`^branch feature/export vs main .* · ${left.length} findings \\(${status.replace('Redline: ', '')}\\)$`), 'Review Branch Against… main');
    log(`  sidebar line: ${line}`);
    await page.locator(`${sel.sidebar} .monaco-list-row[aria-label]`, { hasText: 'Mutable default argument' }).first().waitFor({ timeout: STEP_TIMEOUT });
    const tree = (await treeRows(page)).map((r) => r.text);
    for (const r of tree) log(`  sidebar: ${r}`);
    check(tree.some((r) => r.includes('Shell command built from non-constant input')), `the sidebar lacks the shell finding: ${JSON.stringify(tree)}`);
    check(!tree.some((r) => r.includes('Bare') || r.includes('Unused import')), `the sidebar lists a dismissed or fixed finding: ${JSON.stringify(tree)}`);
    pass('Review Branch Against…', `quick pick "${title}" offers ${rows.map((r) => `${r.label} (${r.description})`).join(', ')}; picked main; the status bar went "${seen[0]}" … "${status}"; the sidebar lists the ${left.length} findings left`);
    const flicker = transientCounts(seen, status);
    // The "finished" event counts what is shown: never, even for a moment, a finding fixed since.
    check(flicker.length === 0, `after Review Branch Against… the status bar showed ${JSON.stringify(flicker)} before "${status}"`);
  });

  await step('"Redline: Review Commit…": pick the latest commit', async () => {
    // What the server should report for HEAD: the CLI's review of the same commit, in a separate
    // cache. A review of a commit reads dismissals from its base, never from the work tree (a
    // change must not dismiss its own findings), so the CLI still reports the bare except that
    // was dismissed in the editor earlier in this run (uncommitted .redline/dismissed.toml).
    const cli = cliReview(ctx, ['--commit', 'HEAD'], 'redline review --commit HEAD failed');
    const dismissedId = ids['bare except'];
    check(cli.findings.some((f) => f.id === dismissedId), `the CLI's review of HEAD honoured the work tree's dismissal of "${EXPECTED[2].title}" (${dismissedId}): ${JSON.stringify(cli.findings.map((f) => [f.id, f.title]))}`);
    // The commit still has `import os`, fixed in the working tree earlier in this run: the editor
    // shows a finding only while its code is there (the same id: the fix closed it); and the
    // editor keeps hiding what its user dismissed.
    const fixedId = ids['unused import'];
    check(cli.findings.some((f) => f.id === fixedId), `the CLI's review of HEAD has no "${EXPECTED[0].title}" (${fixedId}): ${JSON.stringify(cli.findings.map((f) => [f.id, f.title]))}`);
    const shown = cli.findings.filter((f) => f.id !== fixedId && f.id !== dismissedId);
    // As the Problems panel counts them: errors (Critical, High), warnings (Medium), infos (Low).
    const expectedStatus = statusFor(shown.map((f) => f.severity));
    log(`  the CLI's review of HEAD: ${cli.scope_label}: ${JSON.stringify(cli.findings.map((f) => `${f.line} ${f.severity} ${f.title}`))}; without the fixed one → "${expectedStatus}"`);
    await recordStatus(page);
    await palette(page, 'Redline: Review Commit…');
    const rows = await waitQuickPick(page, 'Review Commit');
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
    const seen = await waitReviewRan(page, 'Review Commit… HEAD', expectedStatus);
    const status = expectedStatus;
    log(`  status bar: ${seen.join(' → ')}`);
    const tFinished = Date.now();
    const scope = `commit ${rows[0].label.split(' ')[0]} "Export reports as zip archives"`;
    const line = await waitSidebarMessage(page, new RegExp(`^${scope} .* · ${shown.length} findings \\(${status.replace('Redline: ', '').replace(/[()]/g, '\\$&')}\\)$`), 'Review Commit… HEAD');
    log(`  sidebar line: ${line} (${secs(Date.now() - tFinished)} s after the status bar)`);
    // The open report follows the finished review: its tab is now the commit's.
    const tab = page.locator('.tabs-container .tab', { hasText: 'Redline: commit ' }).first();
    await tab.waitFor({ timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Failure(`the report panel did not follow the commit review; tabs ${JSON.stringify(await tabLabels(page))}`);
    });
    const frame = await waitFrameWith(page, 'Redline review: commit', STEP_TIMEOUT, 'the report after Review Commit…');
    const h3 = await frame.evaluate(() => [...document.querySelectorAll('h3')].map((e) => e.innerText.trim()));
    for (const h of h3) log(`  report finding: ${h}`);
    // The CLI's lines are HEAD's; the report says where the editor shows each finding now: the
    // working tree lacks line 4 (`import os`, removed by the quick fix), so below it, one up.
    for (const f of shown) {
      const now = f.file === FILE && f.line > 4 ? f.line - 1 : f.line;
      check(h3.some((h) => h.includes(`${f.file}:${now}`) && h.includes(f.title.replace(/`/g, ''))), `the report of HEAD lacks "${f.file}:${now} — ${f.title}": ${JSON.stringify(h3)}`);
    }
    check(h3.length === shown.length, `the report of HEAD lists ${h3.length} findings, expected ${shown.length}: ${JSON.stringify(h3)}`);
    const tree = (await treeRows(page)).map((x) => x.text);
    for (const x of tree) log(`  sidebar: ${x}`);
    for (const f of shown) check(tree.some((x) => x.startsWith(f.title)), `the sidebar lacks "${f.title}" after reviewing HEAD: ${JSON.stringify(tree)}`);
    pass('Review Commit…', `quick pick lists ${rows.map((x) => `"${x.label}"`).join(', ')}; picked the first; status bar "${status}" (the CLI's review of HEAD: ${cli.findings.length} findings, one of them fixed in the editor earlier); the open report shows "${(await tab.textContent()).trim().slice(0, 60)}…" with those findings`);
    const flicker = transientCounts(seen, status);
    check(flicker.length === 0, `after Review Commit… the status bar showed ${JSON.stringify(flicker)} before "${status}"`);
  });
}

// Export Report… → SARIF → the save dialog → the file, checked against the sidebar.
export async function exportReport(ctx) {
  const { page, tmp } = ctx;
  const { step, pass, shot } = ctx.steps;

  await step('"Redline: Export Report…" as SARIF', async () => {
    const target = path.join(tmp, 'export', 'redline-report.sarif');
    mkdirSync(path.dirname(target), { recursive: true });
    // The findings' rows ("<title>line N · <source>": label and description run together in
    // innerText), not the files' that group them.
    const shown = (await treeRows(page)).filter((r) => /line \d+ · /.test(r.text)).map((r) => r.text);
    await palette(page, 'Redline: Export Report…');
    const rows = await waitQuickPick(page, 'Export Report');
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
    const message = await waitToast(page, 'Redline: report saved to');
    log(`  notification: ${message ?? 'none'}`);
    check(message && message.includes(target), `no notification "Redline: report saved to ${target}"; notifications ${JSON.stringify(await toastTexts(page))}; quick input ${JSON.stringify(await page.locator(sel.quickInput).innerText().catch(() => ''))}`);
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
}
