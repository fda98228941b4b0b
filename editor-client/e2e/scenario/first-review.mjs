// The first review, as a user meets it: the file opens and the extension activates, the sidebar's
// welcome view, Review Current Branch from the palette (timed to the first squiggle), then what
// the review shows: squiggles, status-bar counts, Problems rows, the sidebar's findings, and a
// click on one that opens its line.

import path from 'node:path';
import { EXPECTED, FILE, POLYGLOT, SQUIGGLE, statusFor } from '../demo.mjs';
import { check, Failure, log, secs, STEP_TIMEOUT, REVIEW_TIMEOUT } from '../steps.mjs';
import { errorsShown, quickInput, palette, statusTexts, waitStatus, editorText, squiggleLines, problemRows, treeRows, findingRow, showRedlineSidebar, tabLabels, sel } from '../workbench.mjs';

// Steps 4–13: from opening app/reports.py to a finding clicked in the sidebar.
export async function firstReview(ctx) {
  const { page, artifacts } = ctx;
  const { step, pass, figures } = ctx.steps;

  await step(`open ${FILE}; the extension activates`, async () => {
    await quickInput(page, '', FILE);
    await page.locator(`${sel.quickRows}.focused`, { hasText: 'reports.py' }).waitFor({ timeout: STEP_TIMEOUT });
    await page.keyboard.press('Enter');
    await page.locator(`${sel.editor} .view-lines`, { hasText: 'def export_report' }).waitFor({ timeout: STEP_TIMEOUT });
    const idle = await waitStatus(page, /Redline/, 60_000, 'the Redline item (the extension active)');
    log(`  status bar: "${idle}"`);
  });

  await step('the Redline sidebar before the first review: the welcome view', async () => {
    await showRedlineSidebar(page);
    const welcome = page.locator(`${sel.sidebar} .welcome-view-content`, { hasText: 'No Redline review yet' }).first();
    await welcome.waitFor({ timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Failure(`the Redline sidebar does not show "No Redline review yet…": ${JSON.stringify(await page.locator(sel.sidebar).innerText())}`);
    });
    const text = (await welcome.innerText()).replace(/\s+/g, ' ').trim();
    log(`  welcome view: ${text}`);
    check(!(await treeRows(page)).length, `the sidebar lists findings before any review: ${JSON.stringify(await treeRows(page))}`);
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
    t0 = await palette(page, 'Redline: Review Current Branch');
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
      throw new Failure(`no squiggle in ${FILE} ${REVIEW_TIMEOUT / 1000} s after the command; status bar ${JSON.stringify(await statusTexts(page))}`);
    }
    const dt = Date.now() - t0;
    const errors = await errorsShown(page);
    check(!errors.length || (await page.locator(sel.squiggle).count()) > 0, `the command showed an error: ${JSON.stringify(errors)}`);
    figures.push(`palette → first squiggle: ${secs(dt)} s`);
    console.log(`e2e: palette → first squiggle: ${secs(dt)} s`);
  });

  await step('squiggles at the planted lines', async () => {
    // Which editor lines carry a squiggle (the whole file fits in the editor here).
    let found = [];
    const deadline = Date.now() + STEP_TIMEOUT;
    for (;;) {
      found = await squiggleLines(page);
      if (EXPECTED.every((e) => found.some((f) => f.line === e.line))) break;
      check(Date.now() < deadline, `squiggles at ${JSON.stringify(found)}, expected lines ${EXPECTED.map((e) => e.line).join(', ')}`);
      await page.waitForTimeout(100);
    }
    pass('squiggles', found.map((f) => `line ${f.line} ${f.kind}`).join(', '));
  });

  await step('status bar shows the counts', async () => {
    // As the Problems panel counts them, over every file of the change: Critical and High (⛔
    // errors), Medium (⚠ warnings), Low (ℹ infos) — "Redline: 3 ⛔ 3 ⚠ 3 ℹ".
    const expected = statusFor([...EXPECTED, ...POLYGLOT].map((e) => e.severity));
    const text = await waitStatus(page, /Redline: \d+ ⛔/, REVIEW_TIMEOUT, 'the finished counts');
    check(text === expected, `status bar "${text}", expected "${expected}"`);
    figures.push(`palette → review finished (status bar counts): ${secs(Date.now() - t0)} s`);
    pass('status bar', `"${text}"`);
  });

  await step('squiggles and Problems rows at the planted lines', async () => {
    await palette(page, 'Problems: Focus on Problems View');
    await page.locator(sel.problemsRows).first().waitFor({ timeout: STEP_TIMEOUT });
    // Six files and nine findings: more rows than the panel shows (its list draws only the rows
    // in view). Maximized, it holds them all; restored after the check.
    await palette(page, 'View: Toggle Maximized Panel');
    await page.locator(sel.quickInput).waitFor({ state: 'hidden', timeout: STEP_TIMEOUT }).catch(() => {});
    // A row of another file may carry the same line number: a row is matched by line and title.
    const all = [...EXPECTED.map((e) => ({ ...e, file: FILE })), ...POLYGLOT];
    const rowOf = (rows, e) => rows.find((r) => r.includes(`[Ln ${e.line},`) && r.includes(e.title));
    let rows = [];
    const deadline = Date.now() + STEP_TIMEOUT;
    for (;;) {
      rows = await problemRows(page);
      if (all.every((e) => rowOf(rows, e))) break;
      if (Date.now() > deadline) break;
      await page.waitForTimeout(200);
    }
    for (const r of rows) log(`  problems: ${r.slice(0, 150)}`);
    await page.screenshot({ path: path.join(artifacts, 'problems.png') });
    for (const e of all) {
      const row = rowOf(rows, e);
      check(row, `no Problems row "${e.title}" at [Ln ${e.line} of ${e.file} (${e.key}); rows: ${JSON.stringify(rows)}`);
      check(/redline/i.test(row), `the Problems row at ${e.file}:${e.line} has no source "redline": ${row}`);
    }
    // Each file of the change with a finding heads its own group of rows.
    for (const file of new Set(all.map((e) => e.file))) {
      check(rows.some((r) => r.startsWith(path.basename(file))), `no Problems group for ${file}; rows: ${JSON.stringify(rows)}`);
    }
    await palette(page, 'View: Toggle Maximized Panel');
    pass('Problems', `rows at lines ${EXPECTED.map((e) => e.line).join(', ')} of ${FILE} and at ${POLYGLOT.map((e) => `${e.file}:${e.line}`).join(', ')}, each with its title and source redline`);
  });

  await step('the Redline sidebar lists the findings', async () => {
    await showRedlineSidebar(page); // open since the welcome view's step
    // A wider sidebar, so that the screenshot shows whole titles: drag the sash at its edge.
    const bar = await page.locator(sel.sidebar).boundingBox();
    if (bar) {
      await page.mouse.move(bar.x + bar.width + 1, bar.y + bar.height / 2);
      await page.mouse.down();
      await page.mouse.move(bar.x + bar.width + 180, bar.y + bar.height / 2, { steps: 5 });
      await page.mouse.up();
    }
    await page.locator(`${sel.sidebar} .monaco-list-row[aria-label]`, { hasText: EXPECTED[0].title }).first().waitFor({ timeout: STEP_TIMEOUT });
    const rows = await treeRows(page);
    for (const r of rows) log(`  sidebar: ${r.text}   [aria-label: ${r.aria}]`);
    for (const e of EXPECTED) {
      const row = rows.find((r) => r.text.includes(e.title));
      check(row, `no sidebar row "${e.title}"; rows: ${JSON.stringify(rows.map((r) => r.text))}`);
      check(new RegExp(`line ${e.line}\\b`).test(row.text), `sidebar row "${e.title}" does not say "line ${e.line}": ${row.text}`);
    }
    // The other languages' findings, each under its file and naming its analyzer.
    for (const e of POLYGLOT) {
      const row = rows.find((r) => r.text.includes(e.title));
      check(row, `no sidebar row "${e.title}" (${e.file}); rows: ${JSON.stringify(rows.map((r) => r.text))}`);
      check(new RegExp(`line ${e.line}\\b`).test(row.text), `sidebar row "${e.title}" does not say "line ${e.line}": ${row.text}`);
      check(row.text.includes(e.analyzer), `sidebar row "${e.title}" does not name ${e.analyzer}: ${row.text}`);
      check(rows.some((r) => r.text.startsWith(e.file)), `no sidebar row for the file ${e.file}; rows: ${JSON.stringify(rows.map((r) => r.text))}`);
    }
    await page.mouse.move(900, 300); // off the sash (it stays highlighted under the pointer)
    await page.waitForTimeout(500); // the sash's hover highlight fades out
    await page.screenshot({ path: path.join(artifacts, 'sidebar.png') });
    pass('sidebar', `${EXPECTED.length + POLYGLOT.length} findings with their titles and "line N": ${EXPECTED.map((e) => `${e.line}`).join(', ')} of ${FILE}; ${POLYGLOT.map((e) => `${e.file}:${e.line} (${e.analyzer})`).join(', ')}`);
  });

  await step('each file in another language shows its squiggle at the planted line', async () => {
    // Opened as a user opens a file (Quick Open), one after the other: the squiggle, of the kind
    // its severity gives, on the planted line (each file fits in the editor).
    const seen = [];
    for (const e of POLYGLOT) {
      await quickInput(page, '', e.file);
      await page.locator(`${sel.quickRows}.focused`, { hasText: path.basename(e.file) }).waitFor({ timeout: STEP_TIMEOUT }).catch(async () => {
        throw new Failure(`Quick Open does not offer ${e.file}: ${JSON.stringify(await page.locator(sel.quickRows).allTextContents())}`);
      });
      await page.keyboard.press('Enter');
      await page.locator('.tabs-container .tab.active', { hasText: path.basename(e.file) }).first().waitFor({ timeout: STEP_TIMEOUT }).catch(async () => {
        throw new Failure(`Quick Open did not open ${e.file}; tabs ${JSON.stringify(await tabLabels(page))}`);
      });
      let found = [];
      const deadline = Date.now() + STEP_TIMEOUT;
      for (;;) {
        found = await squiggleLines(page, sel.activeEditor);
        if (found.some((f) => f.line === e.line && f.kind === SQUIGGLE[e.severity])) break;
        check(Date.now() < deadline, `${e.file}: squiggles at ${JSON.stringify(found)}, expected a ${SQUIGGLE[e.severity]} one on line ${e.line} (${e.analyzer}: "${e.title}")`);
        await page.waitForTimeout(100);
      }
      const shot = `squiggle-${path.basename(e.file).replace(/[^A-Za-z0-9.]/g, '_')}.png`;
      await page.screenshot({ path: path.join(artifacts, shot) });
      seen.push(`${e.file}:${e.line} ${SQUIGGLE[e.severity]} (${e.analyzer})`);
    }
    pass('other languages', seen.join(', '));
  });

  await step('a click on a finding in the sidebar opens its file at its line', async () => {
    const target = EXPECTED.find((e) => e.key === 'shell injection');
    // No editor open, so that the click is what opens the file.
    await palette(page, 'View: Close All Editors');
    await page.locator('.tabs-container .tab').first().waitFor({ state: 'detached', timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Failure(`editors still open after "View: Close All Editors": ${JSON.stringify(await tabLabels(page))}`);
    });
    await (await findingRow(page, target.title)).click();
    await page.locator('.tabs-container .tab.active', { hasText: path.basename(FILE) }).first().waitFor({ timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Failure(`a click on "${target.title}" did not open ${FILE}; tabs ${JSON.stringify(await tabLabels(page))}`);
    });
    const tab = (await tabLabels(page)).find((t) => t.active);
    check(tab.aria.includes(path.basename(FILE)), `the active tab is not ${FILE}: ${JSON.stringify(tab)}`);
    const position = await waitStatus(page, new RegExp(`Ln ${target.line}, Col \\d+`), STEP_TIMEOUT, `the cursor on line ${target.line}`);
    // The editor's own mark of the cursor's line: the highlighted line number in the gutter.
    const active = await page.locator(`${sel.editor} .line-numbers.active-line-number`).first().textContent({ timeout: STEP_TIMEOUT }).catch(() => null);
    check(active?.trim() === String(target.line), `the editor's current line is ${active?.trim()}, expected ${target.line}`);
    const line = (await editorText(page)).split('\n').find((l) => l.includes('shell=True'));
    check(line, `${FILE} in the editor has no \`shell=True\` line`);
    pass('finding click', `"${target.title}" opened ${FILE} (tab "${tab.aria}") with the cursor at "${position}" (gutter line ${active.trim()}: \`${line.trim()}\`)`);
  });
}
