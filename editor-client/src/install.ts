// Installing the Redline server from the wheel this extension ships: which installer, which
// command, in which directory. Pure over its inputs (PATH, workspace folders, the extension's
// directory, a file-system probe) so the decision is unit-tested without VS Code
// (test/install.test.ts); install.vscode.ts asks the user, runs it and shows its output.
//
// The rules, and why:
// - Only the wheel inside the extension's own directory (`server/*.whl`, put there when the .vsix
//   is built), never a file of a workspace: the repository under review is written by the
//   attacker, and nothing it holds may become the program that reviews it.
// - The installer is `uv` or `pipx` from PATH, found like the server itself (absolute PATH
//   entries only, never a binary inside a workspace folder). No workspace setting names it.
// - The command runs in the extension's directory, not in a workspace folder: uv reads
//   `uv.toml` / `pyproject.toml` from its working directory, and one written by the author of
//   the code under review could point it at their package index.
// - Nothing runs until the user chose "Install Redline" in the notification, and the command
//   line is shown before it runs, with its output.
import * as path from 'path';
import { FsProbe, isInside } from './serverDiscovery';

/** The name Redline's wheel is published under on the package index. "redline" there is an
 *  unrelated project: no message may tell a user to install that name. Every message that
 *  names the distribution takes it from here. */
export const DISTRIBUTION = 'redline-review';

/** Where the .vsix keeps the wheel, relative to the extension's directory. */
export const WHEEL_DIR = 'server';

export type InstallerKind = 'uv' | 'pipx';

export interface InstallInput {
  pathEnv: string | undefined;
  platform: NodeJS.Platform;
  workspaceFolders: readonly string[];
  /** The extension's own directory (`context.extensionPath`). */
  extensionPath: string;
  /** The file names in `<extensionPath>/server` (undefined: the directory does not exist). */
  wheelFiles: readonly string[] | undefined;
  fs: FsProbe;
}

export type InstallPlan =
  | {
      kind: 'install';
      installer: InstallerKind;
      command: string;
      args: string[];
      cwd: string;
      wheel: string;
      /** Asks the installer where it puts programs (one line on stdout). */
      binDirArgs: string[];
      notes: string[];
    }
  | { kind: 'none'; message: string; notes: string[] };

const WHEEL = /^[A-Za-z0-9_.]+-[0-9][A-Za-z0-9_.+!]*-py3-none-any\.whl$/;

function pathApi(platform: NodeJS.Platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

/** The bundled wheel's file name, if there is exactly one well-formed wheel. */
export function bundledWheel(files: readonly string[] | undefined): string | undefined {
  const wheels = (files ?? []).filter((f) => WHEEL.test(f)).sort();
  return wheels.length === 1 ? wheels[0] : undefined;
}

/** The install command for `installer`: a program found on PATH, the wheel's absolute path. */
export function installArgs(installer: InstallerKind, wheel: string): { args: string[]; binDirArgs: string[] } {
  if (installer === 'uv') {
    // --force: a stale `redline` tool (or another program named redline) would stop uv; the
    // user has just been told what will be installed.
    return { args: ['tool', 'install', '--force', wheel], binDirArgs: ['tool', 'dir', '--bin'] };
  }
  return { args: ['install', '--force', wheel], binDirArgs: ['environment', '--value', 'PIPX_BIN_DIR'] };
}

/** The whole command line, as shown to the user before it runs (arguments with spaces quoted). */
export function commandLine(command: string, args: readonly string[]): string {
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  return [command, ...args].map(quote).join(' ');
}

export function planInstall(input: InstallInput): InstallPlan {
  const p = pathApi(input.platform);
  const notes: string[] = [];
  const folders = input.workspaceFolders.map((f) => input.fs.realpath(f));
  const inWorkspace = (real: string) => folders.find((f) => isInside(real, f, input.platform));

  const extensionDir = input.fs.realpath(input.extensionPath);
  const wheelName = bundledWheel(input.wheelFiles);
  if (wheelName === undefined) {
    return {
      kind: 'none',
      message: 'This build of the extension does not include the Redline server\'s wheel; install Redline yourself (see the extension\'s README).',
      notes,
    };
  }
  const wheel = p.join(extensionDir, WHEEL_DIR, wheelName);
  const wheelFolder = inWorkspace(wheel) ?? inWorkspace(extensionDir);
  if (wheelFolder !== undefined) {
    // An extension loaded from inside the repository under review (a development host on a
    // checkout of Redline itself, or a hostile one): its wheel is that repository's file.
    return {
      kind: 'none',
      message: `The bundled wheel ${wheel} is inside the workspace folder ${wheelFolder}; Redline never installs a program from the code it reviews.`,
      notes,
    };
  }

  const find = (name: string): string | undefined => {
    const names = input.platform === 'win32' ? [`${name}.exe`, `${name}.cmd`, name] : [name];
    for (const dir of (input.pathEnv ?? '').split(input.platform === 'win32' ? ';' : ':')) {
      if (!dir || !p.isAbsolute(dir)) continue;
      for (const file of names) {
        const real = input.fs.executable(p.join(dir, file));
        if (real === undefined) continue;
        const folder = inWorkspace(real);
        if (folder !== undefined) {
          notes.push(`Skipped ${p.join(dir, file)}: it is inside the workspace folder ${folder}.`);
          continue;
        }
        return p.join(dir, file);
      }
    }
    return undefined;
  };

  for (const installer of ['uv', 'pipx'] as const) {
    const command = find(installer);
    if (command === undefined) continue;
    const { args, binDirArgs } = installArgs(installer, wheel);
    return { kind: 'install', installer, command, args, cwd: extensionDir, wheel, binDirArgs, notes };
  }
  return {
    kind: 'none',
    message: `Neither uv nor pipx is on PATH, so the Redline server (${DISTRIBUTION}) cannot be installed from the wheel this extension ships. Install uv (https://docs.astral.sh/uv/) or pipx, then run "Redline: Restart Server".`,
    notes,
  };
}

/** The `redline` program an installer put in `binDir` (its own answer, one line), if it is an
 *  executable outside every workspace folder. */
export function installedServer(
  binDirOutput: string,
  platform: NodeJS.Platform,
  workspaceFolders: readonly string[],
  fs: FsProbe,
): string | undefined {
  const p = pathApi(platform);
  const dir = binDirOutput.trim().split(/\r?\n/).pop()?.trim() ?? '';
  if (!dir || !p.isAbsolute(dir)) return undefined;
  const folders = workspaceFolders.map((f) => fs.realpath(f));
  for (const file of platform === 'win32' ? ['redline.exe', 'redline.cmd'] : ['redline']) {
    const candidate = p.join(dir, file);
    const real = fs.executable(candidate);
    if (real !== undefined && !folders.some((f) => isInside(real, f, platform))) return candidate;
  }
  return undefined;
}
