import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DiscoveryInput, FsProbe, discoverServer } from '../src/serverDiscovery';

/** A fake file system: these paths are executables (value: their real path). */
function fs(files: Record<string, string | true>, links: Record<string, string> = {}): FsProbe {
  return {
    executable: (f) => (f in files ? (files[f] === true ? f : (files[f] as string)) : undefined),
    realpath: (d) => links[d] ?? d,
  };
}

function input(over: Partial<DiscoveryInput>): DiscoveryInput {
  return {
    serverPath: { defaultValue: '' },
    serverArgs: { defaultValue: ['lsp'] },
    pathEnv: '/usr/local/bin:/usr/bin',
    workspaceFolders: ['/work/repo'],
    platform: 'linux',
    home: '/home/u',
    fs: fs({}),
    ...over,
  };
}

test('redline on PATH', () => {
  const r = discoverServer(input({ fs: fs({ '/usr/bin/redline': true }) }));
  assert.deepEqual(r, { kind: 'found', command: '/usr/bin/redline', args: ['lsp'], source: 'PATH', notes: [] });
});

test('the user setting wins, with ~ expanded and the user\'s args', () => {
  const r = discoverServer(input({
    serverPath: { globalValue: '~/.local/bin/redline' },
    serverArgs: { defaultValue: ['lsp'], globalValue: ['lsp', '--verbose'] },
    fs: fs({ '/home/u/.local/bin/redline': true, '/usr/bin/redline': true }),
  }));
  assert.equal(r.kind, 'found');
  assert.equal(r.kind === 'found' && r.command, '/home/u/.local/bin/redline');
  assert.deepEqual(r.kind === 'found' && r.args, ['lsp', '--verbose']);
});

test('workspace settings are never read: path and args from the workspace are ignored, with a note', () => {
  const r = discoverServer(input({
    serverPath: { workspaceValue: '/tmp/evil', workspaceFolderValue: '/tmp/evil2' },
    serverArgs: { defaultValue: ['lsp'], workspaceValue: ['--exec', 'x'] },
    fs: fs({ '/tmp/evil': true, '/usr/bin/redline': true }),
  }));
  assert.equal(r.kind === 'found' && r.command, '/usr/bin/redline');
  assert.deepEqual(r.kind === 'found' && r.args, ['lsp']);
  assert.equal(r.notes.length, 2);
});

test('a binary inside a workspace folder is refused, also through a symlink or on PATH', () => {
  const inside = discoverServer(input({ serverPath: { globalValue: '/work/repo/.venv/bin/redline' }, fs: fs({ '/work/repo/.venv/bin/redline': true }) }));
  assert.equal(inside.kind, 'notFound');
  assert.match(inside.kind === 'notFound' ? inside.message : '', /inside the workspace folder/);

  const linked = discoverServer(input({ serverPath: { globalValue: '/opt/redline' }, fs: fs({ '/opt/redline': '/work/repo/bin/redline' }) }));
  assert.equal(linked.kind, 'notFound');

  const onPath = discoverServer(input({
    pathEnv: '/work/repo/node_modules/.bin:/usr/bin',
    fs: fs({ '/work/repo/node_modules/.bin/redline': true, '/usr/bin/redline': true }),
  }));
  assert.equal(onPath.kind === 'found' && onPath.command, '/usr/bin/redline');
  assert.match(onPath.notes[0], /Skipped \/work\/repo\/node_modules\/.bin\/redline/);
});

test('a workspace opened through a symlink is still the workspace', () => {
  const r = discoverServer(input({
    workspaceFolders: ['/home/u/repo'],
    pathEnv: '/home/u/repo/bin',
    fs: { executable: (f) => (f === '/home/u/repo/bin/redline' ? '/data/repo/bin/redline' : undefined), realpath: (d) => (d === '/home/u/repo' ? '/data/repo' : d) },
  }));
  assert.equal(r.kind, 'notFound');
});

test('relative PATH entries (the current folder) are skipped', () => {
  const r = discoverServer(input({ pathEnv: '.::bin', fs: fs({ 'redline': true, './redline': true, 'bin/redline': true }) }));
  assert.equal(r.kind, 'notFound');
});

test('not found: the message says how to install', () => {
  const r = discoverServer(input({}));
  assert.equal(r.kind, 'notFound');
  const message = r.kind === 'notFound' ? r.message : '';
  // The bundled wheel, never a name on the package index ("redline" there is not Redline).
  assert.match(message, /"Install Redline".*wheel this extension ships.*uv or pipx/);
  assert.doesNotMatch(message, /install redline/);
  const missing = discoverServer(input({ serverPath: { globalValue: '/nope/redline' } }));
  assert.match(missing.kind === 'notFound' ? missing.message : '', /not an executable file/);
});

test('Windows: redline.exe on PATH, case-insensitive workspace check', () => {
  const r = discoverServer(input({
    platform: 'win32', pathEnv: 'C:\\Repo\\bin;C:\\Tools', workspaceFolders: ['c:\\repo'],
    fs: fs({ 'C:\\Repo\\bin\\redline.exe': true, 'C:\\Tools\\redline.exe': true }),
  }));
  assert.equal(r.kind === 'found' && r.command, 'C:\\Tools\\redline.exe');
});

test('in a remote window the advice names the Remote settings, where VS Code reads machine settings', () => {
  const local = discoverServer(input({ pathEnv: '/usr/bin' }));
  const remote = discoverServer(input({ pathEnv: '/usr/bin', remote: true }));
  assert.ok(local.kind === 'notFound' && remote.kind === 'notFound');
  assert.match(local.message, /in your user settings\.$/);
  assert.match(remote.message, /in your Remote settings \(this window is remote\)\.$/);
});
