// The user's Redline configuration: "Open User Configuration" creates config.toml under the test's XDG_CONFIG_HOME (in the
// temporary directory) from the template and touches no other config.toml.

import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { check, Failure, log, STEP_TIMEOUT } from '../steps.mjs';
import { errorsShown, palette, tabLabels, sel } from '../workbench.mjs';
import { userConfigFile } from '../harness.mjs';

// Step: the file does not exist before; after the command it is the commented template.
export async function openUserConfiguration(ctx) {
  const { page, tmp, repo, env } = ctx;
  const { step, pass } = ctx.steps;
  const { run } = ctx.harness;

  await step('"Redline: Open User Configuration" creates and opens config.toml', async () => {
    const configFile = userConfigFile(env);
    check(!existsSync(configFile) && !existsSync(path.dirname(configFile)), `${configFile} exists before the command`);
    // The user's own configuration (outside the temporary directory) must not be touched.
    const realConfigHome = process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
    const realConfig = [process.env.REDLINE_CONFIG, path.join(realConfigHome, 'redline', 'config.toml')].filter(Boolean);
    const before = realConfig.map((f) => (existsSync(f) ? readFileSync(f, 'utf-8') : null));
    await palette(page, 'Redline: Open User Configuration');
    const tab = page.locator('.tabs-container .tab.active', { hasText: 'config.toml' }).first();
    await tab.waitFor({ timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Failure(`no active editor tab config.toml; tabs ${JSON.stringify(await tabLabels(page))}; errors ${JSON.stringify(await errorsShown(page))}`);
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
}
