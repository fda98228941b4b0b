-- Headless Neovim (0.7 API) in a repository under a path with `é` and `+` (café/c++proj):
-- Neovim spells its URIs `caf%c3%a9/c++proj`, the server its own `caf%C3%A9/c%2B%2Bproj`.
-- Driven by tests/test_neovim.py:
--
--   REDLINE_NVIM_SERVER=<redline executable> REDLINE_NVIM_REPO=<repo> REDLINE_NVIM_OUT=<result.json>
--   nvim --headless -i NONE --noplugin -u tests/nvim/uris.lua
--
-- Reviews the branch with app/reports.py open, asks for code actions at the unused import and
-- applies the fix, adds a first line to the buffer (unsaved) and reads where the squiggles are,
-- reruns the review, then changes app/extra.py on disk (as a pull would) and opens it. Each step
-- records what Neovim shows and goes on even when it did not happen: the test asserts on all.

local server = vim.env.REDLINE_NVIM_SERVER
local repo = vim.env.REDLINE_NVIM_REPO
local out = vim.env.REDLINE_NVIM_OUT
local TIMEOUT = tonumber(vim.env.REDLINE_NVIM_TIMEOUT_MS or "40000")
local SETTLE = 5000 -- ms to wait for a squiggle that should move
local IMPORT_LINE = 3 -- 0-based: `import os`, unused

local result = { version = vim.version(), published = {}, step = "start" }
-- tests/nvim/harness.lua, beside this script.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
local harness = dofile(here .. "harness.lua").new(result, out, TIMEOUT)
local write_result = harness.write_result
local wait_for = harness.wait_for


local function lines_of(bufnr)
  local lines = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(lines, d.lnum)
  end
  table.sort(lines)
  return lines
end

local function same(a, b)
  return vim.deep_equal(a, b)
end


-- Waits up to SETTLE ms for the buffer's squiggles to be on `want`; what they are on either way.
local function settle(bufnr, want)
  vim.wait(SETTLE, function() return same(lines_of(bufnr), want) end, 50)
  return lines_of(bufnr)
end

local function run()
  assert(server and repo and out, "REDLINE_NVIM_SERVER, REDLINE_NVIM_REPO and REDLINE_NVIM_OUT must be set")
  vim.lsp.set_log_level("WARN")
  local finished = {}
  local exited = nil

  local client_id = vim.lsp.start_client({
    name = "redline",
    cmd = { server, "lsp" },
    root_dir = repo,
    workspace_folders = { { uri = vim.uri_from_fname(repo), name = "c++proj" } },
    handlers = {
      ["redline/reviewState"] = function(_, params)
        if params.taskId and (params.state == "finished" or params.state == "failed" or params.state == "cancelled") then
          finished[params.taskId] = params
        end
      end,
      ["redline/findings"] = function() end,
      ["textDocument/publishDiagnostics"] = function(err, params, ctx, config)
        table.insert(result.published, params.uri)
        return vim.lsp.diagnostic.on_publish_diagnostics(err, params, ctx, config)
      end,
    },
    on_exit = function(code, signal)
      exited = { code = code, signal = signal }
    end,
  })
  assert(client_id, "vim.lsp.start_client returned nil")

  vim.cmd("edit " .. vim.fn.fnameescape(repo .. "/app/reports.py"))
  local bufnr = vim.api.nvim_get_current_buf()
  result.buffer_uri = vim.uri_from_bufnr(bufnr)
  assert(vim.lsp.buf_attach_client(bufnr, client_id), "buf_attach_client failed")
  local client
  wait_for("the client to initialize", function()
    client = vim.lsp.get_client_by_id(client_id)
    return client ~= nil and client.initialized
  end)

  local function review(command, args)
    local response = client.request_sync("workspace/executeCommand", { command = command, arguments = args }, 10000, bufnr)
    assert(response and not response.err, command .. " failed: " .. vim.inspect(response))
    local task_id = response.result.taskId
    wait_for(command .. " to finish", function() return finished[task_id] ~= nil end)
    assert(finished[task_id].state == "finished", command .. " ended " .. finished[task_id].state)
  end

  result.step = "review"
  review("redline.review", { { scope = "branch", base = "main" } })
  wait_for("4 diagnostics", function() return #vim.diagnostic.get(bufnr) >= 4 end)
  result.lines_reviewed = lines_of(bufnr)

  result.step = "code actions"
  local pos = { line = IMPORT_LINE, character = 0 }
  local actions = client.request_sync("textDocument/codeAction", {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = pos, ["end"] = pos },
    context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(bufnr, IMPORT_LINE, nil, client_id) },
  }, 10000, bufnr)
  assert(actions and not actions.err, "codeAction failed: " .. vim.inspect(actions))
  result.action_titles = {}
  local fix = nil
  for _, action in ipairs(actions.result or {}) do
    table.insert(result.action_titles, action.title)
    if fix == nil and vim.startswith(action.title, "Redline: apply fix") then
      fix = action
    end
  end
  if fix then
    vim.lsp.util.apply_workspace_edit(fix.edit, client.offset_encoding)
    if fix.command then
      client.request_sync("workspace/executeCommand", fix.command, 10000, bufnr)
    end
    result.import_left = vim.api.nvim_buf_get_lines(bufnr, IMPORT_LINE, IMPORT_LINE + 1, false)[1]
    result.lines_after_fix = settle(bufnr, { 19, 25, 29 })
  end
  local expected = fix and { 20, 26, 30 } or { 4, 21, 27, 31 }

  result.step = "an edit above the findings"
  vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { "# a new first line" })
  result.lines_expected_after_edit = expected
  result.lines_after_edit = settle(bufnr, expected)

  result.step = "rerun"
  result.published = {}
  review("redline.rerun", { vim.empty_dict() })
  result.lines_after_rerun = settle(bufnr, expected)
  result.published_after_rerun = result.published

  result.step = "a file opened after the review"
  local extra = repo .. "/app/extra.py"
  local text = vim.fn.readfile(extra)
  table.insert(text, 1, "# pulled: two new lines")
  table.insert(text, 1, "# on top")
  vim.fn.writefile(text, extra)
  vim.cmd("edit " .. vim.fn.fnameescape(extra))
  local extra_buf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(extra_buf, client_id)
  result.lines_opened = settle(extra_buf, { 4 })

  result.step = "stop"
  vim.lsp.stop_client(client_id)
  wait_for("the server to exit", function() return exited ~= nil end)
  result.exit = exited
  result.step = "done"
end

harness.main(run)
