// Arguments for the server's commands, built from what the user picked or typed. Pure.
import { DebateArgs, ReviewArgs } from './protocol';

function withFolder(args: ReviewArgs, folder: string | undefined): ReviewArgs {
  return folder ? { ...args, folder } : args;
}

export function uncommittedArgs(folder?: string): ReviewArgs {
  return withFolder({ scope: 'uncommitted' }, folder);
}

export function stagedArgs(folder?: string): ReviewArgs {
  return withFolder({ scope: 'staged' }, folder);
}

/** The current branch against `base`; an empty base setting means "the server's default". */
export function branchArgs(base: string | undefined, folder?: string): ReviewArgs {
  const trimmed = (base ?? '').trim();
  return withFolder(trimmed ? { scope: 'branch', base: trimmed } : { scope: 'branch' }, folder);
}

export function commitArgs(ref: string, folder?: string): ReviewArgs {
  return withFolder({ scope: 'commit', ref: ref.trim() }, folder);
}

export function prArgs(pr: string, folder?: string): ReviewArgs {
  return withFolder({ scope: 'pr', pr: pr.trim() }, folder);
}

export interface AskArgs {
  request: string;
  folder?: string;
}

export function askArgs(request: string, folder?: string): AskArgs {
  const args: AskArgs = { request: request.trim() };
  return folder ? { ...args, folder } : args;
}

const PR_NUMBER = /^#?([1-9][0-9]{0,8})$/;
const PR_PATH = /^\/[^/]+\/[^/]+\/pull\/([1-9][0-9]{0,8})(?:\/[A-Za-z0-9/_-]*)?\/?$/;

export type PrParse = { ok: true; value: string; number: number } | { ok: false; error: string };

/** "12", "#12" or https://HOST/OWNER/REPO/pull/12 — the forms the server accepts
 *  (server/redline/git/pr.py); checked in the input box so a typo is caught before a round trip. */
export function parsePullRequest(input: string): PrParse {
  const text = input.trim();
  if (text === '') return { ok: false, error: 'Enter a pull request number or URL.' };
  const number = PR_NUMBER.exec(text);
  if (number) return { ok: true, value: number[1], number: Number(number[1]) };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, error: 'Not a pull request number (12) or URL (https://github.com/OWNER/REPO/pull/12).' };
  }
  const path = PR_PATH.exec(url.pathname);
  if ((url.protocol === 'https:' || url.protocol === 'http:') && path && !url.username && !url.password) {
    return { ok: true, value: text, number: Number(path[1]) };
  }
  return { ok: false, error: 'Not a pull request URL: expected https://HOST/OWNER/REPO/pull/NUMBER.' };
}

export type ExportFormat = 'markdown' | 'json' | 'json-simple' | 'sarif';

export interface ExportChoice {
  format: ExportFormat;
  label: string;
  extension: string;
}

export const EXPORT_CHOICES: readonly ExportChoice[] = [
  { format: 'markdown', label: 'Markdown', extension: 'md' },
  { format: 'json', label: 'JSON', extension: 'json' },
  { format: 'json-simple', label: 'JSON (simple)', extension: 'json' },
  { format: 'sarif', label: 'SARIF', extension: 'sarif' },
];

export function exportFileName(choice: ExportChoice): string {
  return `redline-report.${choice.extension}`;
}

/** Which workspace folder a command is about: the active editor's, else the only (first) one. */
export function chooseFolder(activeFileUri: string | undefined, folderUris: readonly string[]): string | undefined {
  if (activeFileUri) {
    const owner = folderUris
      .filter((f) => activeFileUri === f || activeFileUri.startsWith(f.endsWith('/') ? f : `${f}/`))
      .sort((a, b) => b.length - a.length)[0];
    if (owner) return owner;
  }
  return folderUris[0];
}

/** What Copy puts on the clipboard for one finding. */
export function findingClipboardText(f: { file: string; line: number | null; severity: string; title: string; comment: string; id: string }): string {
  const place = f.line ? `${f.file}:${f.line}` : `${f.file} (unanchored)`;
  return `${place} [${f.severity}] ${f.title}\n\n${f.comment}\n\n(${f.id})`;
}

/** `redline.dismiss` arguments: that finding only, or (`all`) every identical finding in its
 *  file, today's and future ones ("Dismiss All Like This…"). */
export function dismissArgs(id: string, reason: string, all: boolean): { id: string; reason: string; all?: true } {
  return all ? { id, reason, all: true } : { id, reason };
}

export interface CodeActionLike {
  title: string;
  edit?: unknown;
  command?: { command: string; arguments?: unknown[] };
}

export type FixChoice<T> = { kind: 'apply'; action: T } | { kind: 'suggested'; action: T } | { kind: 'none' };

/** The server's quick fix for one finding among the code actions at its range: the "apply fix"
 *  action whose command is `redline.fixApplied [uri, id]` (server/redline/lsp/fixes.py), else its
 *  "show suggested code" (the fix no longer fits the code, or would not parse). */
export function chooseFixAction<T extends CodeActionLike>(actions: readonly T[], findingId: string): FixChoice<T> {
  const about = (a: T, name: string) => a.command?.command === name && a.command.arguments?.[1] === findingId;
  const apply = actions.find((a) => about(a, 'redline.fixApplied') && a.edit !== undefined);
  if (apply) return { kind: 'apply', action: apply };
  const suggested = actions.find((a) => about(a, 'redline.showSuggestedCode'));
  if (suggested) return { kind: 'suggested', action: suggested };
  return { kind: 'none' };
}

/** The message of a JSON-RPC error answer, without the "redline.review: " prefix the server adds
 *  (the user asked for the command; the prefix is for logs). */
export function serverErrorMessage(error: unknown, method?: string): string {
  if (method && typeof error === 'object' && error !== null && (error as { code?: unknown }).code === -32601) {
    // MethodNotFound: an older server without this request.
    return `this Redline server does not support ${method}: update Redline (uv tool upgrade redline)`;
  }
  const raw = error instanceof Error ? error.message : typeof error === 'object' && error !== null && 'message' in error
    ? String((error as { message: unknown }).message)
    : String(error);
  return raw.replace(/^redline\.[A-Za-z]+: /, '');
}

export function rangeArgs(range: string, folder?: string): ReviewArgs {
  return withFolder({ scope: 'range', range: range.trim() }, folder);
}

const RANGE = /^[^\s.][^\s]*?\.\.\.?[^\s.][^\s]*$/;

/** 'A..B' or 'A...B' (server/redline/requests.py): an error to show, or undefined. */
export function rangeError(input: string): string | undefined {
  return RANGE.test(input.trim()) ? undefined : 'Enter a range: A..B, or A...B from their merge-base (e.g. main..HEAD).';
}

/** The most rounds a debate may take (server/redline/config_models.py DebateSettings.rounds). */
export const MAX_ROUNDS = 20;

export type RoundsParse = { ok: true; rounds: number | undefined } | { ok: false; error: string };

/** The rounds box: empty means the server's default (the user's `[debate] rounds`). */
export function parseRounds(input: string): RoundsParse {
  const text = input.trim();
  if (text === '') return { ok: true, rounds: undefined };
  if (!/^[0-9]{1,3}$/.test(text) || Number(text) < 1 || Number(text) > MAX_ROUNDS) {
    return { ok: false, error: `A number of rounds from 1 to ${MAX_ROUNDS}, or empty for your configured default.` };
  }
  return { ok: true, rounds: Number(text) };
}

/** `redline.debate` arguments: the scope picked, and the rounds only when the user gave them. */
export function debateArgs(scope: ReviewArgs, rounds: number | undefined): DebateArgs {
  return rounds === undefined ? { ...scope } : { ...scope, rounds };
}
