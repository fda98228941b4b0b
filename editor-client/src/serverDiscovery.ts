// Which `redline` binary to start. Pure over its inputs (setting values, PATH, workspace folders,
// a file-system probe) so the decision is unit-tested without VS Code.
//
// The rules, and why:
// - `redline.server.path` counts only from user or machine settings (VS Code's `inspect()`
//   globalValue), never from workspace settings: a repository's `.vscode/settings.json` is written
//   by the author of the code under review, who must not choose which program runs.
// - Else `redline` on PATH, skipping relative PATH entries ("", ".") which resolve to the folder
//   VS Code was started in.
// - Never a binary inside a workspace folder (after resolving symlinks): a checked-in or
//   build-produced `redline` in the repository is the author's program too.
import * as path from 'path';

export interface SettingInspect<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

export interface FsProbe {
  /** The file's real path (symlinks resolved) if it is an executable file, else undefined. */
  executable(file: string): string | undefined;
  /** The real path of a directory (symlinks resolved), or the input when it cannot be resolved. */
  realpath(dir: string): string;
}

export interface DiscoveryInput {
  serverPath: SettingInspect<string>;
  serverArgs: SettingInspect<string[]>;
  pathEnv: string | undefined;
  workspaceFolders: readonly string[]; // file-system paths
  platform: NodeJS.Platform;
  home: string | undefined;
  fs: FsProbe;
  /** The window is remote (`vscode.env.remoteName`): settings advice names the Remote settings. */
  remote?: boolean;
}

export type Discovery =
  | { kind: 'found'; command: string; args: string[]; source: 'setting' | 'PATH'; notes: string[] }
  | { kind: 'notFound'; message: string; notes: string[] };

export const DEFAULT_ARGS = ['lsp'];

/** How to fix a missing server. In a remote window (Remote-SSH, WSL, code-server) VS Code reads
 *  machine-scoped settings from the Remote settings only, so the path goes there. */
export function installHint(remote: boolean): string {
  const where = remote ? 'your Remote settings (this window is remote)' : 'your user settings';
  // Never a name on the package index: "redline" there is an unrelated project. The extension
  // ships Redline's own wheel and installs it on request (install.ts).
  return `Choose "Install Redline" to install it from the wheel this extension ships (with uv or pipx), or set "redline.server.path" in ${where}.`;
}

/** The hint where the extension cannot install (no uv or pipx, no bundled wheel). */
export function settingHint(remote: boolean): string {
  const where = remote ? 'your Remote settings (this window is remote)' : 'your user settings';
  return `Install Redline, or set "redline.server.path" in ${where}.`;
}

function pathApi(platform: NodeJS.Platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

export function isInside(file: string, folder: string, platform: NodeJS.Platform): boolean {
  const p = pathApi(platform);
  const norm = (s: string) => (platform === 'win32' ? s.toLowerCase() : s);
  const rel = p.relative(norm(folder), norm(file));
  return rel === '' || (!rel.startsWith('..') && !p.isAbsolute(rel));
}

function candidates(name: string, platform: NodeJS.Platform): string[] {
  return platform === 'win32' ? [`${name}.exe`, `${name}.cmd`, `${name}.bat`, name] : [name];
}

function expandHome(value: string, home: string | undefined): string {
  if (home && (value === '~' || value.startsWith('~/') || value.startsWith('~\\'))) return home + value.slice(1);
  return value;
}

export function discoverServer(input: DiscoveryInput): Discovery {
  const p = pathApi(input.platform);
  const notes: string[] = [];
  const INSTALL_HINT = installHint(input.remote ?? false);
  const folders = input.workspaceFolders.map((f) => input.fs.realpath(f));
  const inWorkspace = (real: string) => folders.find((f) => isInside(real, f, input.platform));

  if (input.serverPath.workspaceValue !== undefined || input.serverPath.workspaceFolderValue !== undefined) {
    notes.push('Ignored "redline.server.path" from the workspace settings: only user settings may choose the server.');
  }
  if (input.serverArgs.workspaceValue !== undefined || input.serverArgs.workspaceFolderValue !== undefined) {
    notes.push('Ignored "redline.server.args" from the workspace settings: only user settings may set them.');
  }
  const rawArgs = input.serverArgs.globalValue ?? input.serverArgs.defaultValue ?? DEFAULT_ARGS;
  const args = Array.isArray(rawArgs) ? rawArgs.map(String) : DEFAULT_ARGS;

  const setting = (input.serverPath.globalValue ?? '').trim();
  const searchPath = (name: string): string | undefined => {
    for (const dir of (input.pathEnv ?? '').split(input.platform === 'win32' ? ';' : ':')) {
      if (!dir || !p.isAbsolute(dir)) continue;
      for (const file of candidates(name, input.platform)) {
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

  if (setting) {
    const value = expandHome(setting, input.home);
    if (p.isAbsolute(value)) {
      const real = input.fs.executable(value);
      if (real === undefined) {
        return { kind: 'notFound', message: `"redline.server.path" is ${value}, which is not an executable file. ${INSTALL_HINT}`, notes };
      }
      const folder = inWorkspace(real);
      if (folder !== undefined) {
        return {
          kind: 'notFound',
          message: `"redline.server.path" (${value}) is inside the workspace folder ${folder}; Redline never starts a program from the code it reviews. ${INSTALL_HINT}`,
          notes,
        };
      }
      return { kind: 'found', command: value, args, source: 'setting', notes };
    }
    if (value.includes('/') || value.includes('\\')) {
      return { kind: 'notFound', message: `"redline.server.path" must be an absolute path or a command name, not ${value}.`, notes };
    }
    const found = searchPath(value);
    if (found !== undefined) return { kind: 'found', command: found, args, source: 'setting', notes };
    return { kind: 'notFound', message: `"redline.server.path" is ${value}, which is not on PATH. ${INSTALL_HINT}`, notes };
  }

  const found = searchPath('redline');
  if (found !== undefined) return { kind: 'found', command: found, args, source: 'PATH', notes };
  return { kind: 'notFound', message: `The Redline language server (redline) was not found on PATH. ${INSTALL_HINT}`, notes };
}

/** The real file system, for `discoverServer`. */
export function nodeFsProbe(): FsProbe {
  // Required here, not at the top: the pure function above stays importable without touching disk.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const fs = require('fs') as typeof import('fs');
  return {
    executable(file: string): string | undefined {
      try {
        const real = fs.realpathSync(file);
        if (!fs.statSync(real).isFile()) return undefined;
        if (process.platform !== 'win32') fs.accessSync(real, fs.constants.X_OK);
        return real;
      } catch {
        return undefined;
      }
    },
    realpath(dir: string): string {
      try {
        return fs.realpathSync(dir);
      } catch {
        return dir;
      }
    },
  };
}
