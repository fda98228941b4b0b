#!/usr/bin/env node
// Smoke test of `redline lsp` through vscode-jsonrpc, the JSON-RPC library VS Code's language
// client is built on: if anything but protocol messages reaches the server's stdout, VS Code's
// reader breaks — and so does this script.
//
//   node tests/node/smoke.js <git repository> <server command...>
//   e.g. node tests/node/smoke.js /tmp/demo .venv/bin/redline lsp
//
// Spawns the server command, initializes with VS Code-like capabilities, runs `redline.review`
// (scope "branch") on the repository, waits for `redline/reviewState` "finished", checks the
// stdout probe (`redline/debugInfo` {probeStdout: true}) leaves the connection working, then
// shutdown/exit. Independently of vscode-jsonrpc, every byte the server wrote to stdout must
// parse as a sequence of well-formed LSP messages.
//
// Prints one JSON summary line on stdout; exit code 0 only if every check passed.
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { pathToFileURL, fileURLToPath } = require("node:url");
const rpc = require("vscode-jsonrpc/node");

const TIMEOUT_MS = Number(process.env.SMOKE_TIMEOUT_MS || 45000);

const [repoArg, ...serverCommand] = process.argv.slice(2);
if (!repoArg || !serverCommand.length) {
  process.stderr.write("usage: node smoke.js <git repository> <server command...>\n");
  process.exit(2);
}
const base = process.env.SMOKE_BASE || "main"; // the branch review's base
const repo = fs.realpathSync(repoArg);
const rootUri = pathToFileURL(repo).href;

const summary = {
  ok: false,
  failures: [],
  connectionErrors: [],
  serverInfo: null,
  positionEncoding: null,
  taskId: null,
  states: [],
  finished: null,
  diagnostics: {}, // repository-relative path → sorted 0-based start lines (source "redline")
  sources: [],
  serverRequests: [],
  probe: null,
  stdoutMessages: 0,
  stdoutBytes: 0,
  exitCode: null,
};

function fail(message) {
  summary.failures.push(message);
}

// -- the raw stdout, checked independently of vscode-jsonrpc -----------------------------------

/** Parse `buf` strictly as LSP base-protocol messages; returns [count, error-or-null]. */
function parseStream(buf) {
  let offset = 0;
  let count = 0;
  while (offset < buf.length) {
    const end = buf.indexOf("\r\n\r\n", offset, "ascii");
    if (end < 0) {
      return [count, `trailing bytes at ${offset}: ${JSON.stringify(buf.subarray(offset, offset + 80).toString())}`];
    }
    const header = buf.subarray(offset, end).toString("ascii");
    let length = null;
    for (const line of header.split("\r\n")) {
      const m = /^([A-Za-z-]+): *(.*)$/.exec(line);
      if (!m) {
        return [count, `bad header line at ${offset}: ${JSON.stringify(line.slice(0, 80))}`];
      }
      if (m[1].toLowerCase() === "content-length") {
        if (!/^\d+$/.test(m[2])) return [count, `bad Content-Length ${JSON.stringify(m[2])}`];
        length = Number(m[2]);
      } else if (m[1].toLowerCase() !== "content-type") {
        return [count, `unknown header ${JSON.stringify(m[1])} at ${offset}`];
      }
    }
    if (length === null) return [count, `no Content-Length in header at ${offset}`];
    const bodyStart = end + 4;
    if (bodyStart + length > buf.length) return [count, `truncated message at ${offset}`];
    const body = buf.subarray(bodyStart, bodyStart + length).toString("utf8");
    try {
      const msg = JSON.parse(body);
      if (msg.jsonrpc !== "2.0") return [count, `not JSON-RPC 2.0 at ${offset}`];
    } catch (err) {
      return [count, `invalid JSON body at ${offset}: ${err.message}`];
    }
    count += 1;
    offset = bodyStart + length;
  }
  return [count, null];
}

// -- the session -----------------------------------------------------------------------------

const child = spawn(serverCommand[0], serverCommand.slice(1), {
  cwd: repo,
  env: process.env,
  stdio: ["pipe", "pipe", "pipe"],
});
const rawChunks = [];
child.stdout.on("data", (chunk) => rawChunks.push(chunk));
let stderrTail = "";
child.stderr.on("data", (chunk) => {
  stderrTail = (stderrTail + chunk.toString("utf8")).slice(-4000);
});
const exited = new Promise((resolve) => {
  child.on("exit", (code, signal) => resolve(code === null ? `signal ${signal}` : code));
  child.on("error", (err) => {
    fail(`cannot start ${serverCommand.join(" ")}: ${err.message}`);
    resolve(`spawn error`);
  });
});

const connection = rpc.createMessageConnection(
  new rpc.StreamMessageReader(child.stdout),
  new rpc.StreamMessageWriter(child.stdin)
);
let closed = false;
let shuttingDown = false;
connection.onError(([error, message]) => {
  summary.connectionErrors.push(`${error && error.message ? error.message : error}${message ? ` (${JSON.stringify(message).slice(0, 200)})` : ""}`);
});
connection.onClose(() => {
  closed = true;
  if (!shuttingDown) summary.connectionErrors.push("connection closed before shutdown");
});

const waiters = [];
function until(check, what, ms = TIMEOUT_MS) {
  return new Promise((resolve, reject) => {
    const poll = () => {
      if (summary.connectionErrors.length) {
        reject(new Error(`connection error while waiting for ${what}: ${summary.connectionErrors[0]}`));
        return true;
      }
      const value = check();
      if (value) {
        resolve(value);
        return true;
      }
      return false;
    };
    if (poll()) return;
    const timer = setTimeout(() => {
      waiters.splice(waiters.indexOf(entry), 1);
      reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
    }, ms);
    const entry = () => {
      if (poll()) {
        clearTimeout(timer);
        return true;
      }
      return false;
    };
    waiters.push(entry);
  });
}
function wake() {
  for (const waiter of [...waiters]) {
    if (waiter()) waiters.splice(waiters.indexOf(waiter), 1);
  }
}
connection.onError(wake);
connection.onClose(wake);

const published = new Map(); // uri → diagnostics
connection.onNotification("textDocument/publishDiagnostics", (params) => {
  published.set(params.uri, params.diagnostics);
  wake();
});
connection.onNotification("redline/reviewState", (params) => {
  summary.states.push(params.state);
  if (params.taskId === summary.taskId && ["finished", "failed", "cancelled"].includes(params.state)) {
    summary.finished = params;
  }
  wake();
});
connection.onNotification("redline/findings", () => {});
connection.onNotification("window/logMessage", () => {});
connection.onNotification("window/showMessage", (params) => {
  summary.serverRequests.push(`window/showMessage: ${params.message}`);
});
connection.onNotification("$/progress", () => {});

// Requests a server may send VS Code: answered the way VS Code does.
connection.onRequest("window/workDoneProgress/create", () => {
  summary.serverRequests.push("window/workDoneProgress/create");
  return null;
});
connection.onRequest("workspace/configuration", (params) => {
  summary.serverRequests.push("workspace/configuration");
  return params.items.map(() => null);
});
connection.onRequest("client/registerCapability", () => {
  summary.serverRequests.push("client/registerCapability");
  return null;
});
connection.onRequest("client/unregisterCapability", () => null);
connection.onRequest("window/showMessageRequest", () => null);
connection.onRequest("workspace/workspaceFolders", () => [{ uri: rootUri, name: path.basename(repo) }]);

const CAPABILITIES = {
  general: {
    positionEncodings: ["utf-16"],
    regularExpressions: { engine: "ECMAScript", version: "ES2020" },
    markdown: { parser: "marked", version: "1.1.0" },
    staleRequestSupport: { cancel: true, retryOnContentModified: [] },
  },
  workspace: {
    applyEdit: true,
    workspaceEdit: {
      documentChanges: true,
      resourceOperations: ["create", "rename", "delete"],
      failureHandling: "textOnlyTransactional",
      normalizesLineEndings: true,
      changeAnnotationSupport: { groupsOnLabel: true },
    },
    configuration: true,
    workspaceFolders: true,
    didChangeConfiguration: { dynamicRegistration: true },
    didChangeWatchedFiles: { dynamicRegistration: true, relativePatternSupport: true },
    executeCommand: { dynamicRegistration: true },
    diagnostics: { refreshSupport: true },
  },
  textDocument: {
    synchronization: { dynamicRegistration: true, willSave: true, willSaveWaitUntil: true, didSave: true },
    publishDiagnostics: {
      relatedInformation: true,
      versionSupport: false,
      tagSupport: { valueSet: [1, 2] },
      codeDescriptionSupport: true,
      dataSupport: true,
    },
    codeAction: {
      dynamicRegistration: true,
      isPreferredSupport: true,
      disabledSupport: true,
      dataSupport: true,
      resolveSupport: { properties: ["edit"] },
      codeActionLiteralSupport: {
        codeActionKind: {
          valueSet: ["", "quickfix", "refactor", "refactor.extract", "refactor.inline", "refactor.rewrite", "source", "source.organizeImports"],
        },
      },
      honorsChangeAnnotations: true,
    },
    hover: { dynamicRegistration: true, contentFormat: ["markdown", "plaintext"] },
  },
  window: {
    showMessage: { messageActionItem: { additionalPropertiesSupport: true } },
    showDocument: { support: true },
    workDoneProgress: true,
  },
};

function relative(uri) {
  let file;
  try {
    file = fileURLToPath(uri);
  } catch {
    return uri;
  }
  try {
    file = fs.realpathSync(file);
  } catch {
    // a deleted file: keep the path as sent
  }
  return path.relative(repo, file).split(path.sep).join("/");
}

async function session() {
  connection.listen();
  const init = await connection.sendRequest("initialize", {
    processId: process.pid,
    clientInfo: { name: "Visual Studio Code", version: "1.99.0" },
    locale: "en",
    rootPath: repo,
    rootUri,
    capabilities: CAPABILITIES,
    initializationOptions: {},
    trace: "off",
    workspaceFolders: [{ uri: rootUri, name: path.basename(repo) }],
  });
  summary.serverInfo = init.serverInfo || null;
  summary.positionEncoding = init.capabilities.positionEncoding || "utf-16";
  const commands = (init.capabilities.executeCommandProvider || {}).commands || [];
  if (!commands.includes("redline.review")) fail(`redline.review not among the commands: ${commands}`);
  await connection.sendNotification("initialized", {});

  const started = await connection.sendRequest("workspace/executeCommand", {
    command: "redline.review",
    arguments: [{ scope: "branch", base }],
  });
  if (!started || !started.taskId) throw new Error(`redline.review answered ${JSON.stringify(started)}`);
  summary.taskId = started.taskId;
  await until(() => summary.finished, "the review to finish");
  if (summary.finished.state !== "finished") fail(`review ended ${JSON.stringify(summary.finished)}`);

  for (const [uri, diags] of published) {
    const ours = diags.filter((d) => d.source === "redline");
    if (ours.length) summary.diagnostics[relative(uri)] = ours.map((d) => d.range.start.line).sort((a, b) => a - b);
    for (const d of diags) if (!summary.sources.includes(d.source)) summary.sources.push(d.source);
  }

  // Writes to the server's stdout (print, and fd 1 as a child process would) must not reach
  // the protocol stream; the next request proves the connection still works.
  const probe = await connection.sendRequest("redline/debugInfo", { probeStdout: true });
  const after = await connection.sendRequest("redline/debugInfo", {});
  summary.probe = { pid: probe.pid, samePid: probe.pid === after.pid, running: after.running };

  shuttingDown = true;
  await connection.sendRequest("shutdown");
  await connection.sendNotification("exit");
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]);
}

// Settles (rejects) as soon as vscode-jsonrpc reports an error or the stream closes early:
// a polluted stream fails fast instead of waiting for answers that will never parse.
const broken = new Promise((_, reject) => {
  const check = () => {
    if (summary.connectionErrors.length) reject(new Error(summary.connectionErrors[0]));
  };
  connection.onError(check);
  connection.onClose(check);
});
broken.catch(() => {});

async function main() {
  let exitWait = 10000;
  try {
    await withTimeout(Promise.race([session(), broken]), TIMEOUT_MS, "the session");
  } catch (err) {
    fail(`session failed: ${err && err.message ? err.message : err}`);
    child.stdin.end(); // end of input: the server stops; killed if it does not within 3 s
    exitWait = 3000;
  }
  try {
    summary.exitCode = await withTimeout(exited, exitWait, "the server to exit");
  } catch (err) {
    fail(err.message);
    child.kill("SIGKILL");
    summary.exitCode = await exited;
  }
  if (summary.exitCode !== 0) fail(`server exit code ${summary.exitCode}`);
  connection.dispose();

  const raw = Buffer.concat(rawChunks);
  summary.stdoutBytes = raw.length;
  const [count, error] = parseStream(raw);
  summary.stdoutMessages = count;
  if (error) fail(`server stdout is not a clean LSP stream: ${error}`);
  if (count === 0) fail("the server wrote no messages");
  for (const e of summary.connectionErrors) fail(`vscode-jsonrpc: ${e}`);
  if (summary.failures.length) summary.stderrTail = stderrTail;
  summary.ok = summary.failures.length === 0;
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  process.exitCode = summary.ok ? 0 : 1;
}

main().catch((err) => {
  fail(`internal error: ${err && err.stack ? err.stack : err}`);
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  process.exitCode = 1;
});
