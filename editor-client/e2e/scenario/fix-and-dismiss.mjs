// Acting on findings: the quick fix in the editor, Dismiss… from the sidebar (and
// .redline/dismissed.toml), and Apply Fix from the sidebar's context menu.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { EXPECTED, FILE, POLYGLOT, statusFor } from '../demo.mjs';
import { check, Failure, log, STEP_TIMEOUT } from '../steps.mjs';
import { quickInput, statusTexts, waitStatus, editorText, openQuickFix, problemRows, treeRows, findingRow, findingMenu, chooseMenuItem, toastTexts, sel } from '../workbench.mjs';

// The quick fix on line 4, then Dismiss… of the bare except: two findings left.
export async function quickFixAndDismiss(ctx) {
  const { page, ids, repo } = ctx;
  const { step, pass } = ctx.steps;

  await step('quick fix on line 4 removes `import os` and its finding', async () => {
    const editor = page.locator(`${sel.editor} .view-lines`).first();
    await editor.click();
    await quickInput(page, ':', '4');
    await page.keyboard.press('Enter');
    await waitStatus(page, /Ln 4, Col/, STEP_TIMEOUT, 'the cursor on line 4');
    const fix = page.locator('.action-widget .monaco-list-row', { hasText: 'Redline: apply fix' });
    try {
      await openQuickFix(page, fix.first());
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
    const text = await editorText(page);
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
        throw new Failure(`the sidebar still lists "${EXPECTED[0].title}" after the fix: ${JSON.stringify((await treeRows(page)).map((r) => r.text))}`);
      });
    const rows = await problemRows(page);
    check(!rows.some((r) => r.includes(EXPECTED[0].title)), `the Problems panel still lists "${EXPECTED[0].title}" after the fix: ${JSON.stringify(rows)}`);
    // The quick-fix menu on line 4 (now `import subprocess`) no longer offers the fixed finding.
    await page.locator(`${sel.editor} .view-lines`).first().click();
    await quickInput(page, ':', '4');
    await page.keyboard.press('Enter');
    await waitStatus(page, /Ln 4, Col/, STEP_TIMEOUT, 'the cursor on line 4');
    await page.keyboard.press('Control+.');
    await page.locator('.action-widget .monaco-list-row, .action-widget, .monaco-editor-overlaymessage').first().waitFor({ timeout: 5_000 }).catch(() => {});
    await page.waitForTimeout(300);
    const after = (await page.locator('.action-widget .monaco-list-row').allTextContents()).map((t) => t.trim()).filter(Boolean);
    const message = (await page.locator('.monaco-editor-overlaymessage').allTextContents()).join(' ').trim();
    log(`  quick-fix menu on line 4 after the fix: ${after.length ? JSON.stringify(after) : `none (${message || 'no menu'})`}`);
    await page.keyboard.press('Escape');
    check(!after.some((t) => t.includes(EXPECTED[0].title)), `the quick-fix menu on line 4 still offers the fixed finding: ${JSON.stringify(after)}`);
    const left = (await treeRows(page)).map((r) => r.text);
    for (const r of left) log(`  sidebar after the fix: ${r}`);
    pass('quick fix', `"${label}" removed \`import os\` (editor and, after Ctrl+S, disk); the finding left the sidebar and Problems`);
  });

  await step('Dismiss… from the sidebar context menu', async () => {
    const target = EXPECTED.find((e) => e.key === 'bare except');
    const reason = 'e2e: the caller logs and re-raises';
    const row = await findingRow(page, target.title);
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
        throw new Failure(`"${target.title}" is still in the sidebar after Dismiss…: ${JSON.stringify((await treeRows(page)).map((r) => r.text))}`);
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
    // What a user expects: the counts follow the list (the unused import fixed, the bare except
    // dismissed: "Redline: 3 ⛔ 2 ⚠ 2 ℹ").
    const left = [...EXPECTED.filter((e) => e.key !== 'unused import' && e.key !== 'bare except'), ...POLYGLOT];
    const expected = statusFor(left.map((e) => e.severity));
    const status = await waitStatus(page, new RegExp(`${expected}$`), 5_000, `the counts of the ${left.length} findings left`).catch(async () => null);
    check(status !== null, `expected "${expected}" (${left.length} findings left), the status bar shows ${JSON.stringify(await statusTexts(page))}`);
    pass('status bar after fix + dismiss', `"${status}"`);
  });
}

// Apply Fix on the mutable default (after the pickers: the report panel holds the active group).
export async function applyFixFromSidebar(ctx) {
  const { page, repo } = ctx;
  const { step, pass } = ctx.steps;

  await step('Apply Fix from the sidebar context menu', async () => {
    // Only a finding with improved code offers Apply Fix: the mutable default has some, the shell
    // command none (the offline review's bandit/ruff findings).
    const shell = EXPECTED.find((e) => e.key === 'shell injection');
    const target = EXPECTED.find((e) => e.key === 'mutable default');
    const shellMenu = await findingMenu(page, shell.title);
    log(`  context menu of "${shell.title}": ${JSON.stringify(shellMenu)}`);
    await page.keyboard.press('Escape');
    await page.locator('.context-view .monaco-menu').waitFor({ state: 'detached', timeout: STEP_TIMEOUT }).catch(() => {});
    check(shellMenu.includes('Dismiss…'), `the context menu of "${shell.title}" has no "Dismiss…": ${JSON.stringify(shellMenu)}`);
    check(!shellMenu.includes('Apply Fix'), `the context menu of "${shell.title}" (no fix offered) shows "Apply Fix": ${JSON.stringify(shellMenu)}`);
    // `import os` was removed earlier: the mutable default is one line up.
    const row = (await treeRows(page)).find((r) => r.text.startsWith(target.title));
    check(row && row.text.includes(`line ${target.line - 1} `), `the sidebar row "${target.title}" is not at line ${target.line - 1}: ${JSON.stringify(row)}`);
    // The editor renders only the lines in view: line 30 is below them, read it from disk (saved).
    const before = readFileSync(path.join(repo, FILE), 'utf-8');
    check(before.split('\n')[target.line - 2] === 'def collect_titles(reports: list[dict], seen=[]) -> list[str]:', `line ${target.line - 1} of ${FILE} is not the mutable default before the fix:\n${before}`);
    const menu = await findingMenu(page, target.title);
    log(`  context menu of "${target.title}": ${JSON.stringify(menu)}`);
    check(menu.includes('Apply Fix'), `the context menu of "${target.title}" has no "Apply Fix": ${JSON.stringify(menu)}`);
    await chooseMenuItem(page, 'Apply Fix');
    // The finding opens in the active editor group (the report panel's, focused since Show Report).
    const activeEditor = `.editor-group-container.active ${sel.editor}`;
    await page.waitForFunction(
      (sel) => [...document.querySelectorAll(sel + ' .view-line')].some((l) => l.textContent.replace(/\u00a0/g, ' ').trim() === 'if seen is None:'),
      `${activeEditor} .view-lines`,
      { timeout: STEP_TIMEOUT },
    ).catch(async () => {
      throw new Failure(`the active editor has no \`if seen is None:\` after Apply Fix:\n${await editorText(page, activeEditor)}\nnotifications ${JSON.stringify(await toastTexts(page))}`);
    });
    const text = await editorText(page, activeEditor);
    log(`  editor after Apply Fix:\n${text.split('\n').filter((l) => /seen/.test(l)).map((l) => `    ${l}`).join('\n')}`);
    check(text.includes('def collect_titles(reports: list[dict], seen=None) -> list[str]:') && !text.includes('seen=[]'), `the mutable default is not \`seen=None\` after Apply Fix:\n${text}`);
    check(text.includes('        seen = []') && text.includes('seen.append(report_title(report))'), `Apply Fix changed more than the default argument:\n${text}`);
    await page.locator(`${sel.sidebar} .monaco-list-row[aria-label]`, { hasText: target.title }).first()
      .waitFor({ state: 'detached', timeout: STEP_TIMEOUT })
      .catch(async () => {
        throw new Failure(`"${target.title}" is still in the sidebar after Apply Fix: ${JSON.stringify((await treeRows(page)).map((r) => r.text))}`);
      });
    const left = (await treeRows(page)).map((r) => r.text);
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
    const status = await waitStatus(page, /^Redline: /, STEP_TIMEOUT, 'the counts');
    log(`  status bar: "${status}"`);
    pass('Apply Fix', `"${target.title}": \`seen=[]\` became \`seen=None\` with an \`if seen is None:\` guard in the editor (and, after Ctrl+S, on disk); the row left the sidebar; "${shell.title}" (no improved code) offers ${JSON.stringify(shellMenu)}, no "Apply Fix"`);
  });
}
