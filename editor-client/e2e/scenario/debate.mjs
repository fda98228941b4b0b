// The debate mode: two debaters and a summarizer on scripted models (scripted_debate.py on
// 127.0.0.1, named in the user's configuration — the reviews before stay offline: no [models]
// model), "Redline: Start Debate…" on the current branch for 2 rounds, the turns streaming into
// the debate panel, an interjection typed in the panel and heard by the next debater, the
// neutral summary, and the action item it names as a squiggle and a Problems row.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FILE } from '../demo.mjs';
import { freePort, userConfigFile } from '../harness.mjs';
import { check, Failure, log, REVIEW_TIMEOUT, secs, STEP_TIMEOUT } from '../steps.mjs';
import { errorsShown, palette, problemRows, quickInput, sel, showRedlineSidebar, squiggleLines, tabLabels, treeRows, waitFrameWith, waitQuickPick, waitSidebarMessage } from '../workbench.mjs';

const ALICE = 'openai/alice';
const BOB = 'openai/bob';
const JUDGE = 'openai/judge';
const INTERJECTION = 'Is target_dir checked by the caller?';
// The shell line of the demo (line 21 on the branch; 20 once the quick fix removed `import os`).
const SHELL_CODE = '    return subprocess.call(command, shell=True)';
const SHELL_LINE = 20;
const ACTION_TITLE = 'Pass the zip command as an argument list';

// What the scripted models say, in order.
const SCRIPT = {
  turn_delay: 2.5, // seconds before each turn's answer: long enough to see it stream and to interject
  summarizer: JUDGE,
  debaters: {
    [ALICE]: {
      turns: [
        '`export_report` builds a shell command from `name` and `target_dir`: **shell injection**.',
        'The caller does not check it either: quote nothing, pass a list to `subprocess.call`.',
      ],
      position: 'Replace the shell string with an argument list.',
    },
    [BOB]: {
      turns: [
        'Agreed on the shell call; zipping in a subprocess per report is fine for the volumes here.',
        'No performance objection to an argument list.',
      ],
      position: 'An argument list costs nothing; do it.',
    },
  },
  // The JSON of prompts/debate/summarizer.md (server/redline/debate/schemas.py).
  summary: {
    overview: 'Both positions find the shell call in export_report injectable and ask for an argument list.',
    consensus: [{ point: 'The shell call in export_report is injectable through name and target_dir.', supported_by: ['Debater A', 'Debater B'] }],
    disagreements: [],
    action_items: [
      {
        title: ACTION_TITLE,
        detail: 'Both positions agree: `shell=True` with a formatted string lets `name` inject commands.',
        severity: 'High',
        category: 'Security',
        file: FILE,
        existing_code: SHELL_CODE,
        improved_code: '    return subprocess.call(["zip", "-r", f"{target_dir}/{name}.zip", f"reports/{name}"])',
        supported_by: ['Debater A', 'Debater B'],
      },
    ],
  },
};

// The user's configuration: the debaters and the summarizer on the scripted server; no model for
// reviews. Written over the template "Open User Configuration" created, as the user would.
function debateConfig(base) {
  return `# Redline configuration (written by the e2e test's debate step).
[models]
api_key = "test-key"

[debate]
rounds = 3

[debate.reviewers.security]
model = "${ALICE}"
api_base = "${base}"

[debate.reviewers.performance]
model = "${BOB}"
api_base = "${base}"

[debate.summarizer]
model = "${JUDGE}"
api_base = "${base}"
`;
}

// The debate panel as the test reads it (the frame code-server nests the webview in).
async function readPanel(frame) {
  return frame.evaluate(() => ({
    status: document.getElementById('status')?.innerText ?? '',
    h1: document.querySelector('h1')?.innerText ?? '',
    articles: [...document.querySelectorAll('article')].map((a) => ({
      cls: a.className,
      speaker: a.dataset.speaker ?? null,
      round: a.dataset.round ? Number(a.dataset.round) : null,
      h3: a.querySelector('h3')?.innerText.trim() ?? '',
      text: a.querySelector('.text')?.innerText.trim() ?? '',
    })),
    summary: document.querySelector('.summary')?.innerText ?? '',
    steer: ['interject-text', 'interject-send', 'stop', 'export'].map((id) => [id, !document.getElementById(id)?.disabled]),
  }));
}

function requestsLogged(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf-8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

// The debate panel for docs/images/vscode-debate.png: its editor group maximized and the bottom
// panel hidden for the shot, the transcript scrolled to the interjection; then back as it was.
async function screenshot(page, frame, file) {
  const run = (title) => palette(page, title).then(() => page.waitForTimeout(400), (err) => log(`  (screenshot layout: ${err.message})`));
  await run('View: Hide Panel');
  await run('View: Toggle Maximize Editor Group');
  await frame.evaluate(() => document.querySelector('article.interjection')?.scrollIntoView({ block: 'start' }));
  await frame.evaluate(() => window.scrollBy(0, -330));
  await page.mouse.move(700, 850);
  await page.waitForTimeout(300);
  await page.screenshot({ path: file });
  await run('View: Toggle Maximize Editor Group');
}

export async function debate(ctx) {
  const { page, tmp, env, redline, here, artifacts } = ctx;
  const { step, pass, shot, figures } = ctx.steps;
  const requestsLog = path.join(tmp, 'debate-requests.jsonl');
  let frame = null;

  await step('the user configures two debaters and a summarizer (scripted models)', async () => {
    const port = await freePort();
    const scriptFile = path.join(tmp, 'debate-script.json');
    writeFileSync(scriptFile, JSON.stringify(SCRIPT, null, 2));
    const python = path.join(path.dirname(redline), 'python');
    const { child, logFile } = ctx.harness.startService('scripted-models', python, [path.join(here, 'scripted_debate.py'), '--port', String(port), '--script', scriptFile, '--log', requestsLog]);
    const base = `http://127.0.0.1:${port}/v1`;
    for (const deadline = Date.now() + STEP_TIMEOUT; ;) {
      check(child.exitCode === null, `scripted_debate.py exited (${child.exitCode}): ${readFileSync(logFile, 'utf-8')}`);
      const ok = await fetch(`${base}/models`).then((r) => r.ok, () => false);
      if (ok) break;
      check(Date.now() < deadline, `the scripted models did not answer on ${base}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    writeFileSync(userConfigFile(env), debateConfig(base));
    log(`  scripted models on ${base}; ${userConfigFile(env)}: [debate.reviewers.security] ${ALICE}, [debate.reviewers.performance] ${BOB}, [debate.summarizer] ${JUDGE}`);
  });

  await step('"Redline: Start Debate…": the current branch, 2 rounds', async () => {
    await palette(page, 'Redline: Start Debate…');
    const rows = await waitQuickPick(page, 'Start Debate');
    log(`  scopes: ${rows.map((r) => r.label).join(', ')}`);
    for (const s of ['Uncommitted changes', 'Staged changes', 'Current branch', 'Branch against…', 'Commit…', 'Range…', 'Pull request…']) {
      check(rows.some((r) => r.label === s), `the scope quick pick has no "${s}": ${JSON.stringify(rows.map((r) => r.label))}`);
    }
    await page.locator(sel.quickInputBox).fill('Current branch');
    await page.locator(`${sel.quickRows}.focused`, { hasText: 'Current branch' }).waitFor({ timeout: STEP_TIMEOUT });
    await page.keyboard.press('Enter');
    // The rounds box: the same quick input, now a text box with the rounds prompt.
    await page.waitForFunction(() => /rounds/i.test(document.querySelector('.quick-input-widget .quick-input-message, .quick-input-widget .quick-input-header')?.textContent ?? '')
      || /rounds/i.test(document.querySelector('.quick-input-widget')?.innerText ?? ''), null, { timeout: STEP_TIMEOUT })
      .catch(async () => {
        throw new Failure(`no rounds box after picking the scope: ${JSON.stringify(await page.locator(sel.quickInput).innerText().catch(() => ''))}`);
      });
    await shot('debate-rounds-box');
    await page.locator(sel.quickInputBox).fill('2');
    const t = Date.now();
    await page.keyboard.press('Enter');
    frame = await waitFrameWith(page, 'Debate: branch', STEP_TIMEOUT, 'the debate panel');
    const dt = Date.now() - t;
    figures.push(`Start Debate → debate panel: ${secs(dt)} s`);
    const tabs = await tabLabels(page);
    const tab = tabs.find((x) => x.text.startsWith('Redline Debate'));
    check(tab, `no "Redline Debate" tab: ${JSON.stringify(tabs)}`);
    const panel = await readPanel(frame);
    log(`  panel "${tab.text}" after ${secs(dt)} s: ${panel.h1}; ${panel.status}`);
    pass('Start Debate…', `scope quick pick with ${rows.length} scopes; "Current branch", 2 rounds → panel "${tab.text}"`);
  });

  await step('the turns stream in, and an interjection typed in the panel is heard', async () => {
    // A turn in flight shows as it streams (the scripted model answers after 2.5 s).
    await frame.waitForFunction(() => document.querySelector('article.streaming'), null, { timeout: REVIEW_TIMEOUT, polling: 50 }).catch(async () => {
      throw new Failure(`no turn in flight in the debate panel: ${JSON.stringify(await readPanel(frame))}; errors ${JSON.stringify(await errorsShown(page))}`);
    });
    const live = await readPanel(frame);
    log(`  in flight: ${live.status}`);
    check(/is speaking…/.test(live.status), `the panel's status does not say who is speaking: "${live.status}"`);
    // The first turn finished: Security (alice), round 1, with its text.
    const first = SCRIPT.debaters[ALICE].turns[0].replace(/[`*]/g, '');
    await frame.waitForFunction((text) => [...document.querySelectorAll('article.turn:not(.streaming)')].some((a) => a.innerText.includes(text)), first, { timeout: REVIEW_TIMEOUT, polling: 50 });
    await frame.locator('#interject-text').fill(INTERJECTION);
    await frame.locator('#interject-send').click();
    const tSent = Date.now();
    // Queued at once, then in the transcript when the server adds it before the next turn.
    await frame.waitForFunction((text) => [...document.querySelectorAll('article.interjection')].some((a) => a.innerText.includes(text)), INTERJECTION, { timeout: STEP_TIMEOUT, polling: 50 });
    await frame.waitForFunction((text) => [...document.querySelectorAll('article.interjection:not(.pending)')].some((a) => a.innerText.includes(text)), INTERJECTION, { timeout: REVIEW_TIMEOUT, polling: 50 }).catch(async () => {
      throw new Failure(`the interjection never left "queued": ${JSON.stringify(await readPanel(frame))}`);
    });
    log(`  interjection in the transcript ${secs(Date.now() - tSent)} s after Interject`);
    check(await frame.locator('#interject-text').inputValue() === '', 'the interjection box was not emptied after sending');
    pass('debate streaming', `a turn showed while in flight ("${live.status}"); "${INTERJECTION}" was queued, then added to the transcript`);
  });

  await step('the debate ends with the neutral summary', async () => {
    await frame.waitForFunction(() => /^Debate finished/.test(document.getElementById('status')?.innerText ?? ''), null, { timeout: REVIEW_TIMEOUT, polling: 100 }).catch(async () => {
      throw new Failure(`the debate did not finish: ${JSON.stringify(await readPanel(frame))}; errors ${JSON.stringify(await errorsShown(page))}`);
    });
    const panel = await readPanel(frame);
    log(`  ${panel.status}`);
    for (const a of panel.articles) log(`  ${a.h3}: ${a.text.slice(0, 90)}`);
    const turns = panel.articles.filter((a) => a.cls.includes('turn'));
    const expected = [['security', 1, ALICE, 0], ['performance', 1, BOB, 0], ['security', 2, ALICE, 1], ['performance', 2, BOB, 1]];
    check(turns.length === expected.length, `${turns.length} turns in the panel, expected ${expected.length}: ${JSON.stringify(turns.map((a) => a.h3))}`);
    expected.forEach(([speaker, round, model, n], i) => {
      const a = turns[i];
      const label = speaker === 'security' ? 'Security' : 'Performance';
      check(a.speaker === speaker && a.round === round && a.h3 === `Round ${round} · ${label}`, `turn ${i + 1} is "${a.h3}" (${a.speaker}, round ${a.round}), expected Round ${round} · ${label}`);
      check(a.text.includes(SCRIPT.debaters[model].turns[n].replace(/[`*]/g, '')), `turn ${i + 1} (${a.h3}) does not show what ${model} said: ${a.text}`);
    });
    // The interjection sits between two turns; the next debater's prompt had it, none before.
    const at = panel.articles.findIndex((a) => a.cls.includes('interjection') && a.text.includes(INTERJECTION));
    check(at > 0 && at < panel.articles.length - 1, `the interjection is not between two turns: ${JSON.stringify(panel.articles.map((a) => a.h3))}`);
    const next = panel.articles.slice(at + 1).find((a) => a.cls.includes('turn'));
    const nextModel = (next.speaker === 'security' ? ALICE : BOB).split('/').pop(); // as litellm sends it
    const nextIndex = next.round - 1;
    const requests = requestsLogged(requestsLog);
    const turnRequests = requests.filter((r) => r.kind === 'turn');
    const heard = turnRequests.find((r) => r.model === nextModel && r.turn === nextIndex);
    check(heard, `no request of ${nextModel} for its turn ${nextIndex + 1}: ${JSON.stringify(turnRequests.map((r) => [r.model, r.turn]))}`);
    check(heard.text.includes(INTERJECTION), `the turn after the interjection (${next.h3}, ${nextModel}) was not shown it`);
    const before = turnRequests.filter((r) => r.at < heard.at && r.text.includes(INTERJECTION));
    check(before.length === 0, `a turn before the interjection was shown it: ${JSON.stringify(before.map((r) => [r.model, r.turn]))}`);
    // The summarizer is told who said what anonymously: no debater model in what it received.
    const summaryRequest = requests.find((r) => r.kind === 'summary');
    check(summaryRequest, `the summarizer (${JUDGE}) was never asked: ${JSON.stringify(requests.map((r) => [r.model, r.kind]))}`);
    for (const m of [ALICE, BOB, 'alice', 'bob']) check(!summaryRequest.text.includes(m), `the summarizer's request names "${m}"`);
    check(/Summary/.test(panel.summary) && panel.summary.includes(ACTION_TITLE), `the panel's summary lacks the action item "${ACTION_TITLE}": ${panel.summary}`);
    const steer = Object.fromEntries(panel.steer);
    check(!steer['interject-text'] && !steer['interject-send'] && !steer.stop, `the interjection box or Stop is still enabled after the debate: ${JSON.stringify(panel.steer)}`);
    check(steer.export, 'Export Markdown is not enabled after the debate');
    await screenshot(page, frame, path.join(artifacts, 'debate.png'));
    pass('debate', `${turns.length} turns in order (${turns.map((a) => a.h3).join(', ')}); the interjection reached ${next.h3} (${nextModel}) and no earlier turn; the summarizer saw no debater model; the summary names "${ACTION_TITLE}"; steering disabled, Export enabled`);
  });

  await step('the debate\'s action item is a squiggle and a Problems row', async () => {
    await quickInput(page, '', FILE);
    await page.locator(`${sel.quickRows}.focused`, { hasText: path.basename(FILE) }).waitFor({ timeout: STEP_TIMEOUT });
    await page.keyboard.press('Enter');
    await page.locator('.tabs-container .tab.active', { hasText: path.basename(FILE) }).first().waitFor({ timeout: STEP_TIMEOUT });
    let lines = [];
    for (const deadline = Date.now() + STEP_TIMEOUT; ; await page.waitForTimeout(200)) {
      lines = await squiggleLines(page, sel.activeEditor); // the debate panel's group: reports.py opened there
      if (lines.some((l) => l.line === SHELL_LINE) || Date.now() > deadline) break;
    }
    log(`  squiggles: ${JSON.stringify(lines)}`);
    check(lines.some((l) => l.line === SHELL_LINE), `no squiggle on line ${SHELL_LINE} (${SHELL_CODE.trim()}): ${JSON.stringify(lines)}`);
    await palette(page, 'Problems: Focus on Problems View');
    let rows = [];
    for (const deadline = Date.now() + STEP_TIMEOUT; ; await page.waitForTimeout(200)) {
      rows = await problemRows(page);
      if (rows.some((r) => r.includes(ACTION_TITLE)) || Date.now() > deadline) break;
    }
    for (const r of rows) log(`  problems: ${r.slice(0, 150)}`);
    const row = rows.find((r) => r.includes(ACTION_TITLE));
    check(row, `no Problems row "${ACTION_TITLE}": ${JSON.stringify(rows)}`);
    check(row.includes(`[Ln ${SHELL_LINE},`) && /redline/i.test(row), `the Problems row "${ACTION_TITLE}" is not redline's at line ${SHELL_LINE}: ${row}`);
    pass('debate findings', `"${ACTION_TITLE}" squiggled on line ${SHELL_LINE} and listed in Problems: ${row.slice(0, 120)}`);
  });

  await step('the review\'s findings stay beside the debate\'s; "Show Findings Of…" switches', async () => {
    // Each run keeps its findings: after the debate the sidebar and Problems still hold the
    // review's (the mutable default stays from the review alone), each row tagged by its runs.
    await showRedlineSidebar(page);
    const rowsNow = async () => (await treeRows(page)).map((r) => r.text);
    const waitRows = async (ok, what) => {
      let rows = [];
      for (const deadline = Date.now() + STEP_TIMEOUT; ; await page.waitForTimeout(200)) {
        rows = await rowsNow();
        if (ok(rows)) return rows;
        if (Date.now() > deadline) throw new Failure(`${what}: the sidebar lists ${JSON.stringify(rows)}`);
      }
    };
    const both = await waitRows((rows) => rows.some((r) => / · review$/.test(r)) && rows.some((r) => /debate$/.test(r)), 'the review\'s and the debate\'s rows together');
    for (const r of both) log(`  sidebar: ${r}`);
    const problems = await problemRows(page);
    check(problems.some((r) => !r.includes(ACTION_TITLE) && /redline/i.test(r)), `Problems lost the review's findings after the debate: ${JSON.stringify(problems)}`);
    await palette(page, 'Redline: Show Findings Of…');
    const choices = await waitQuickPick(page, 'Show the findings of');
    log(`  choices: ${choices.map((c) => `${c.label} — ${c.description}`).join(' | ')}`);
    await page.locator(sel.quickInputBox).fill('Debate only');
    await page.locator(`${sel.quickRows}.focused`, { hasText: 'Debate only' }).waitFor({ timeout: STEP_TIMEOUT });
    await page.keyboard.press('Enter');
    const debateOnly = await waitRows((rows) => rows.length > 0 && !rows.some((r) => / · review$/.test(r)) && rows.some((r) => /debate$/.test(r)), 'only the debate\'s rows');
    const only = await waitSidebarMessage(page, /^debate only · .*1 finding/, 'the sidebar\'s line after "Debate only"');
    log(`  sidebar line: ${only}`);
    await shot('debate-only');
    await palette(page, 'Redline: Show Findings Of…');
    await waitQuickPick(page, 'Show the findings of');
    await page.locator(sel.quickInputBox).fill('All runs together');
    await page.locator(`${sel.quickRows}.focused`, { hasText: 'All runs together' }).waitFor({ timeout: STEP_TIMEOUT });
    await page.keyboard.press('Enter');
    await waitRows((rows) => rows.length === both.length, 'every run\'s rows again');
    await waitSidebarMessage(page, /^review \+ debate · /, 'the sidebar\'s line after "All runs together"');
    pass('runs kept', `after the debate the sidebar lists ${both.length} rows of the review and the debate; "Debate only" left ${debateOnly.length}; "All runs together" brought back ${both.length}`);
  });
}
