// The VS Code workbench as the test sees it in code-server: the selectors and the small moves a
// user makes (the command palette, quick inputs and picks, the status bar, the editor's text and
// squiggles, the quick-fix menu, Problems, the Redline sidebar and its context menus,
// notifications, webview frames, tabs). Each function takes the page; what the DOM looks like is
// known here only.

import { check, Failure, REVIEW_TIMEOUT, STEP_TIMEOUT } from './steps.mjs';

export const sel = {
  workbench: '.monaco-workbench',
  quickInput: '.quick-input-widget',
  quickInputBox: '.quick-input-widget .quick-input-box input',
  quickRows: '.quick-input-widget .quick-input-list .monaco-list-row',
  statusbar: '#workbench\\.parts\\.statusbar',
  sidebar: '#workbench\\.parts\\.sidebar',
  activitybar: '#workbench\\.parts\\.activitybar',
  problemsRows: '.markers-panel .monaco-list-row',
  editor: '.editor-instance .monaco-editor',
  activeEditor: '.editor-group-container.active .editor-instance .monaco-editor',
  squiggle: '.monaco-editor .squiggly-error, .monaco-editor .squiggly-warning, .monaco-editor .squiggly-info',
  errorShown: '.monaco-dialog-box, .notifications-toasts .notification-list-item .codicon-error',
};

// Error dialogs and error notifications on screen (their text), to fail with what a user reads.
export async function errorsShown(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('.monaco-dialog-box, .notifications-toasts .notification-list-item')]
      .filter((e) => e.classList.contains('monaco-dialog-box') || e.querySelector('.codicon-error'))
      .map((e) => e.innerText.replace(/\s+/g, ' ').trim()),
  );
}

// Open the quick input with `prefix` (">" = commands, "" = files, ":" = go to line) and type.
export async function quickInput(page, prefix, text) {
  await page.keyboard.press('Escape');
  await page.keyboard.press('F1');
  const box = page.locator(sel.quickInputBox);
  await box.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await box.fill(prefix + text);
}

// Run a command from the palette: F1, type its title, wait until the focused row is that
// command, Enter. Returns the time Enter was pressed.
export async function palette(page, title) {
  await quickInput(page, '>', title);
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
  const t = Date.now();
  await page.keyboard.press('Enter');
  return t;
}

export async function statusTexts(page) {
  return page.locator(`${sel.statusbar} .statusbar-item`).evaluateAll((els) => els.map((e) => e.textContent.trim()).filter(Boolean));
}

export async function waitStatus(page, re, timeout, what) {
  try {
    await page.waitForFunction(
      ({ bar, src }) => [...document.querySelectorAll(bar + ' .statusbar-item')].some((e) => new RegExp(src).test(e.textContent.trim())),
      { bar: sel.statusbar, src: re.source },
      { timeout, polling: 100 },
    );
  } catch {
    throw new Failure(`status bar never showed ${what} (${re}); it shows ${JSON.stringify(await statusTexts(page))}`);
  }
  return (await statusTexts(page)).find((t) => re.test(t));
}

export async function editorText(page, editor = sel.editor) {
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
export async function openQuickFix(page, row) {
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
export async function squiggleLines(page, editor = sel.editor) {
  return page.locator(editor).first().evaluate((ed) => {
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

export async function problemRows(page) {
  return page.locator(sel.problemsRows).evaluateAll((els) => els.map((e) => e.innerText.replace(/\s+/g, ' ').trim()));
}

export async function treeRows(page) {
  return page.locator(`${sel.sidebar} .monaco-list-row[aria-label]`).evaluateAll((els) =>
    els.map((e) => ({ aria: e.getAttribute('aria-label'), text: e.innerText.replace(/\s+/g, ' ').trim() })),
  );
}

export async function findingRow(page, title) {
  return page.locator(`${sel.sidebar} .monaco-list-row[aria-label]`, { hasText: title }).first();
}

// The Redline view in the sidebar: its activity bar item is clicked only when another view (or
// none) is shown — a click on the active item closes the sidebar.
export async function showRedlineSidebar(page) {
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
export async function findingMenu(page, title) {
  await (await findingRow(page, title)).click({ button: 'right' });
  const items = page.locator('.context-view .monaco-menu .action-item a.action-menu-item');
  await items.first().waitFor({ timeout: STEP_TIMEOUT }).catch(() => {
    throw new Failure(`no context menu on the sidebar row "${title}"`);
  });
  return (await items.locator('.action-label').allTextContents()).map((t) => t.trim()).filter(Boolean);
}

// Choose `label` in the open context menu: hover it, then Enter (VS Code's menus act on mouse up
// after a hover; the keyboard is the dependable way).
export async function chooseMenuItem(page, label) {
  const item = page.locator('.context-view .monaco-menu .action-item a.action-menu-item', { hasText: label }).first();
  await item.hover();
  await page.waitForFunction((label) => document.querySelector('.context-view .monaco-menu .action-item.focused')?.textContent.includes(label), label, { timeout: STEP_TIMEOUT });
  await page.keyboard.press('Enter');
}

// A notification toast with `text`: its text once shown, null after `timeout`.
export async function waitToast(page, text, timeout = STEP_TIMEOUT) {
  const toast = page.locator('.notifications-toasts .notification-list-item', { hasText: text }).first();
  return toast.waitFor({ timeout }).then(() => toast.innerText().then((t) => t.replace(/\s+/g, ' ').trim()), () => null);
}

export async function toastTexts(page) {
  return page.locator('.notifications-toasts .notification-list-item').evaluateAll((els) => els.map((e) => e.innerText.replace(/\s+/g, ' ').trim()));
}


// The rows of the open quick pick as a user reads them: label, description, detail.
export async function quickPickRows(page) {
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
export async function waitQuickPick(page, title) {
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
    throw new Failure(`no quick pick "${title}" with rows; title ${JSON.stringify(t)}, errors ${JSON.stringify(await errorsShown(page))}`);
  }
  return quickPickRows(page);
}

// Record every text the Redline status bar item shows from now on (a fast offline review may be
// "starting…" for a few milliseconds only): proof that a review ran, not the last one's counts.
export async function recordStatus(page) {
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

export async function statusSeen(page) {
  return page.evaluate(() => window.__redlineStatusSeen ?? []);
}

// After recordStatus(page): the status bar showed a running review, then settles on `expected`
// (the counts of what the sidebar lists). Returns the texts it showed meanwhile.
export async function waitReviewRan(page, what, expected) {
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
    throw new Failure(`${what}: the status bar never went from a running review to "${expected}"; it showed ${JSON.stringify(await statusSeen(page))}; errors ${JSON.stringify(await errorsShown(page))}`);
  }
  const seen = (await statusSeen(page)).filter((t) => /^Redline: /.test(t)); // not the progress item
  return seen.slice(seen.findIndex((t) => /…$/.test(t)));
}

// Counts the status bar showed after the review ran that are not the settled ones.
export function transientCounts(seen, expected) {
  return [...new Set(seen.filter((t) => !/…$/.test(t) && t !== expected))];
}

// The frame (code-server nests a webview in two iframes) whose body has `text`; null if none.
export async function frameWith(page, text) {
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

export async function waitFrameWith(page, text, timeout, what) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const f = await frameWith(page, text);
    if (f) return f;
    if (Date.now() > deadline) throw new Failure(`${what}: no webview frame shows "${text}" after ${timeout / 1000} s; errors ${JSON.stringify(await errorsShown(page))}`);
    await page.waitForTimeout(50);
  }
}

// The line above the findings in the Redline sidebar (the view's message: scope and counts).
export async function sidebarMessage(page) {
  return page.locator(`${sel.sidebar} .tree-explorer-viewlet-tree-view .message`).evaluateAll((els) => els.map((e) => e.innerText.replace(/\s+/g, ' ').trim()).filter(Boolean).join(' | '));
}

// Wait until the sidebar's line reads `re` (it follows the status bar through the session).
export async function waitSidebarMessage(page, re, what) {
  const deadline = Date.now() + STEP_TIMEOUT;
  let text;
  while (!re.test((text = await sidebarMessage(page)))) {
    check(Date.now() < deadline, `${what}: the sidebar's line reads "${text}", expected ${re}`);
    await page.waitForTimeout(50);
  }
  return text;
}

export async function tabLabels(page) {
  return page.locator('.tabs-container .tab').evaluateAll((els) =>
    els.map((e) => ({ text: e.textContent.replace(/\s+/g, ' ').trim(), aria: e.getAttribute('aria-label') ?? '', active: e.classList.contains('active') })),
  );
}
