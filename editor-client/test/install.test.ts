// Which installer and which command install the bundled server: never a workspace's file,
// never a workspace's directory, never a name on the package index Redline does not own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FsProbe, installHint } from '../src/serverDiscovery';
import { DISTRIBUTION, InstallInput, bundledWheel, commandLine, installedServer, planInstall } from '../src/install';

function fs(files: Record<string, string | true>, links: Record<string, string> = {}): FsProbe {
  return {
    executable: (f) => (f in files ? (files[f] === true ? f : (files[f] as string)) : undefined),
    realpath: (d) => links[d] ?? d,
  };
}

const WHEEL = 'redline-0.1.0-py3-none-any.whl';
const EXT = '/home/u/.vscode/extensions/redline.redline-0.1.0';

function input(over: Partial<InstallInput>): InstallInput {
  return {
    pathEnv: '/usr/local/bin:/usr/bin',
    platform: 'linux',
    workspaceFolders: ['/work/repo'],
    extensionPath: EXT,
    wheelFiles: [WHEEL],
    fs: fs({}),
    ...over,
  };
}

function paths(plan: ReturnType<typeof planInstall>): string[] {
  return plan.kind === 'install' ? [plan.command, plan.cwd, plan.wheel, ...plan.args] : [];
}

test('uv first: uv tool install of the bundled wheel, in the extension directory', () => {
  const plan = planInstall(input({ fs: fs({ '/usr/bin/uv': true, '/usr/bin/pipx': true }) }));
  assert.equal(plan.kind, 'install');
  if (plan.kind !== 'install') return;
  assert.equal(plan.installer, 'uv');
  assert.equal(plan.command, '/usr/bin/uv');
  assert.deepEqual(plan.args, ['tool', 'install', '--force', `${EXT}/server/${WHEEL}`]);
  assert.equal(plan.cwd, EXT);
  assert.deepEqual(plan.binDirArgs, ['tool', 'dir', '--bin']);
  assert.equal(commandLine(plan.command, plan.args), `/usr/bin/uv tool install --force ${EXT}/server/${WHEEL}`);
});

test('pipx when there is no uv', () => {
  const plan = planInstall(input({ fs: fs({ '/usr/local/bin/pipx': true }) }));
  assert.equal(plan.kind, 'install');
  if (plan.kind !== 'install') return;
  assert.equal(plan.installer, 'pipx');
  assert.deepEqual(plan.args, ['install', '--force', `${EXT}/server/${WHEEL}`]);
  assert.deepEqual(plan.binDirArgs, ['environment', '--value', 'PIPX_BIN_DIR']);
});

test('neither: no plan, and the message says what to install', () => {
  const plan = planInstall(input({}));
  assert.equal(plan.kind, 'none');
  assert.match(plan.kind === 'none' ? plan.message : '', /Neither uv nor pipx is on PATH/);
});

test('an installer inside a workspace folder is skipped, also through a symlink, and relative PATH entries are ignored', () => {
  const plan = planInstall(input({
    pathEnv: '.::/work/repo/.venv/bin:/opt/tools:/usr/bin',
    fs: fs({ 'uv': true, '/work/repo/.venv/bin/uv': true, '/opt/tools/uv': '/work/repo/bin/uv', '/usr/bin/pipx': true }),
  }));
  assert.equal(plan.kind, 'install');
  if (plan.kind !== 'install') return;
  assert.equal(plan.command, '/usr/bin/pipx');
  assert.equal(plan.notes.length, 2);
  assert.ok(plan.notes.every((n) => n.includes('inside the workspace folder /work/repo')));
});

test('never a workspace path: not the wheel, not the installer, not the working directory', () => {
  for (const folders of [['/work/repo'], ['/work/repo', '/srv/other'], ['/']]) {
    const plan = planInstall(input({ workspaceFolders: folders, fs: fs({ '/usr/bin/uv': true }) }));
    if (folders.includes('/')) {
      // A workspace that holds everything: the extension's own wheel is inside it too.
      assert.equal(plan.kind, 'none');
      continue;
    }
    assert.equal(plan.kind, 'install');
    for (const p of paths(plan)) assert.ok(!folders.some((f) => p.startsWith(f + '/')), p);
  }
});

test('an extension loaded from inside the workspace (a development host on a checkout) installs nothing', () => {
  const plan = planInstall(input({ extensionPath: '/work/repo/editor-client', fs: fs({ '/usr/bin/uv': true }) }));
  assert.equal(plan.kind, 'none');
  assert.match(plan.kind === 'none' ? plan.message : '', /never installs a program from the code it reviews/);
  const linked = planInstall(input({ extensionPath: '/ext', fs: fs({ '/usr/bin/uv': true }, { '/ext': '/work/repo/ext' }) }));
  assert.equal(linked.kind, 'none');
});

test('no bundled wheel (or an ambiguous set): no plan', () => {
  assert.equal(planInstall(input({ wheelFiles: undefined, fs: fs({ '/usr/bin/uv': true }) })).kind, 'none');
  assert.equal(planInstall(input({ wheelFiles: [WHEEL, 'redline-0.2.0-py3-none-any.whl'], fs: fs({ '/usr/bin/uv': true }) })).kind, 'none');
  assert.equal(bundledWheel(['README', '../x-1-py3-none-any.whl', 'a b-1-py3-none-any.whl']), undefined);
  assert.equal(bundledWheel(['redline_review-0.1.0-py3-none-any.whl']), 'redline_review-0.1.0-py3-none-any.whl');
});

test('the command line shown quotes what the shell would split', () => {
  assert.equal(commandLine('/usr/bin/uv', ['tool', 'install', "/home/a b/it's.whl"]), "/usr/bin/uv tool install '/home/a b/it'\\''s.whl'");
});

test('the installed program: from the installer\'s bin directory, never inside a workspace', () => {
  const probe = fs({ '/home/u/.local/bin/redline': true, '/work/repo/bin/redline': true });
  assert.equal(installedServer('/home/u/.local/bin\n', 'linux', ['/work/repo'], probe), '/home/u/.local/bin/redline');
  assert.equal(installedServer('/work/repo/bin', 'linux', ['/work/repo'], probe), undefined);
  assert.equal(installedServer('relative/bin', 'linux', [], probe), undefined);
  assert.equal(installedServer('', 'linux', [], probe), undefined);
});

test('the messages never name a distribution Redline does not own', () => {
  assert.equal(DISTRIBUTION, 'redline-review');
  for (const remote of [false, true]) {
    const hint = installHint(remote);
    assert.doesNotMatch(hint, /install redline\b/);
    assert.match(hint, /Install Redline/);
  }
});
