-- Headless Neovim (0.7 API) as a real LSP client of `redline lsp`; driven by tests/test_neovim.py:
--
--   REDLINE_NVIM_SERVER=<redline executable> REDLINE_NVIM_REPO=<demo repo>
--   REDLINE_NVIM_OUT=<result.json> nvim --headless -i NONE --noplugin -u tests/nvim/init.lua
--
-- Starts the server (vim.lsp.start_client), opens app/reports.py, runs `redline.review` on the
-- branch, waits for the diagnostics, applies "Redline: apply fix" at the unused import (the
-- code action's edit, then its command), and writes what it saw as JSON before `qa!`.

local server = vim.env.REDLINE_NVIM_SERVER
local repo = vim.env.REDLINE_NVIM_REPO
local out = vim.env.REDLINE_NVIM_OUT
local base = vim.env.REDLINE_NVIM_BASE or "main"
local TIMEOUT = tonumber(vim.env.REDLINE_NVIM_TIMEOUT_MS or "40000")
local IMPORT_LINE = 3 -- 0-based: `import os`, unused

local result = { version = vim.version(), states = {}, messages = {}, step = "start" }
-- tests/nvim/harness.lua, beside this script.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
local harness = dofile(here .. "harness.lua").new(result, out, TIMEOUT)
local write_result = harness.write_result
local wait_for = harness.wait_for


local function redline_diagnostics(bufnr)
  local rows = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(rows, { lnum = d.lnum, col = d.col, source = d.source, severity = d.severity, message = d.message })
  end
  table.sort(rows, function(a, b) return a.lnum < b.lnum end)
  return rows
end

local function lines_of(rows)
  local lines = {}
  for _, row in ipairs(rows) do
    table.insert(lines, row.lnum)
  end
  return lines
end


local function run()
  assert(server and repo and out, "REDLINE_NVIM_SERVER, REDLINE_NVIM_REPO and REDLINE_NVIM_OUT must be set")
  vim.lsp.set_log_level("WARN")
  local task_id, finished = nil, nil
  local exited = nil

  result.step = "start_client"
  local client_id = vim.lsp.start_client({
    name = "redline",
    cmd = { server, "lsp" },
    root_dir = repo,
    workspace_folders = { { uri = vim.uri_from_fname(repo), name = "demo" } },
    handlers = {
      ["redline/reviewState"] = function(_, params)
        table.insert(result.states, params.state)
        if params.taskId == task_id and (params.state == "finished" or params.state == "failed" or params.state == "cancelled") then
          finished = params
        end
      end,
      ["redline/findings"] = function() end,
      ["window/showMessage"] = function(_, params)
        table.insert(result.messages, params.message)
      end,
    },
    on_exit = function(code, signal)
      exited = { code = code, signal = signal }
    end,
  })
  assert(client_id, "vim.lsp.start_client returned nil")

  result.step = "open"
  vim.cmd("edit " .. vim.fn.fnameescape(repo .. "/app/reports.py"))
  local bufnr = vim.api.nvim_get_current_buf()
  result.lines_before = vim.api.nvim_buf_line_count(bufnr)
  assert(vim.lsp.buf_attach_client(bufnr, client_id), "buf_attach_client failed")
  local client
  wait_for("the client to initialize", function()
    client = vim.lsp.get_client_by_id(client_id)
    return client ~= nil and client.initialized
  end)
  result.offset_encoding = client.offset_encoding

  result.step = "redline.review"
  local response, err = client.request_sync("workspace/executeCommand", {
    command = "redline.review",
    arguments = { { scope = "branch", base = base } },
  }, 10000, bufnr)
  assert(response and not response.err, "redline.review failed: " .. vim.inspect(err or (response and response.err)))
  task_id = response.result.taskId
  result.task_id = task_id
  wait_for("the review to finish", function() return finished ~= nil end)
  result.finished = { state = finished.state, findings = finished.findings, counts = finished.counts, error = finished.error }
  assert(finished.state == "finished", "the review ended " .. finished.state .. ": " .. tostring(finished.error))
  wait_for("4 diagnostics", function() return #vim.diagnostic.get(bufnr) >= 4 end)
  result.diagnostics = redline_diagnostics(bufnr)
  result.diagnostic_lines = lines_of(result.diagnostics)

  result.step = "textDocument/codeAction"
  local context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(bufnr, IMPORT_LINE, nil, client_id) }
  local pos = { line = IMPORT_LINE, character = 0 }
  local actions_response = client.request_sync("textDocument/codeAction", {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = pos, ["end"] = pos },
    context = context,
  }, 10000, bufnr)
  assert(actions_response and not actions_response.err, "codeAction failed: " .. vim.inspect(actions_response))
  local actions = actions_response.result or {}
  result.action_titles = {}
  local fix = nil
  for _, action in ipairs(actions) do
    table.insert(result.action_titles, action.title)
    if fix == nil and vim.startswith(action.title, "Redline: apply fix") then
      fix = action
    end
  end
  assert(fix, "no 'Redline: apply fix' action at line " .. IMPORT_LINE)
  assert(fix.edit, "the fix action has no edit")

  result.step = "apply the fix"
  vim.lsp.util.apply_workspace_edit(fix.edit, client.offset_encoding)
  if fix.command then
    local cmd = type(fix.command) == "table" and fix.command or fix
    local applied = client.request_sync("workspace/executeCommand", {
      command = cmd.command,
      arguments = cmd.arguments,
    }, 10000, bufnr)
    assert(applied and not applied.err, "fix command failed: " .. vim.inspect(applied))
    result.fix_command = cmd.command
    result.fix_command_result = applied.result
  end
  result.text_after = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
  result.lines_after = vim.api.nvim_buf_line_count(bufnr)
  -- The fixed finding is gone; the others moved up with the deleted line.
  wait_for("3 diagnostics after the fix", function() return #vim.diagnostic.get(bufnr) == 3 end)
  result.diagnostic_lines_after_fix = lines_of(redline_diagnostics(bufnr))

  result.step = "stop"
  vim.lsp.stop_client(client_id)
  wait_for("the server to exit", function() return exited ~= nil end)
  result.exit = exited
  result.step = "done"
end

harness.main(run)
