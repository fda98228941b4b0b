-- Headless Neovim (0.7 API) with its default LSP handlers: what a user is shown. Driven by
-- tests/test_neovim_messages.py:
--
--   REDLINE_NVIM_SERVER=<redline executable> REDLINE_NVIM_REPO=<repository>
--   REDLINE_NVIM_OUT=<result.json> nvim --headless -i NONE --noplugin -u tests/nvim/messages.lua
--
-- Every message Neovim puts in front of the user is recorded: `vim.notify` (where the default
-- handlers send error answers and Error `window/showMessage`) and `nvim_out_write` (where they
-- send Info and Warning `window/showMessage`). Runs an uncommitted review that finds nothing,
-- then commands that fail: with arguments of the wrong shape (InvalidParams) and in their body
-- (RequestFailed), each through `vim.lsp.buf.execute_command`, as a user's keymap would.

local server = vim.env.REDLINE_NVIM_SERVER
local repo = vim.env.REDLINE_NVIM_REPO
local out = vim.env.REDLINE_NVIM_OUT
local TIMEOUT = tonumber(vim.env.REDLINE_NVIM_TIMEOUT_MS or "40000")

local result = { version = vim.version(), shown = {}, step = "start" }
-- tests/nvim/harness.lua, beside this script.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
local harness = dofile(here .. "harness.lua").new(result, out, TIMEOUT)
local write_result = harness.write_result
local wait_for = harness.wait_for

local function record(how, text)
  table.insert(result.shown, { how = how, text = text })
end

vim.notify = function(msg, level)
  record("notify:" .. tostring(level), msg)
end
vim.api.nvim_out_write = function(text)
  record("out", text)
end



local function count_shown()
  return #result.shown
end

local function run()
  assert(server and repo and out, "REDLINE_NVIM_SERVER, REDLINE_NVIM_REPO and REDLINE_NVIM_OUT must be set")
  vim.lsp.set_log_level("WARN")
  local finished = nil
  local exited = nil

  result.step = "start_client"
  local client_id = vim.lsp.start_client({
    name = "redline",
    cmd = { server, "lsp" },
    root_dir = repo,
    workspace_folders = { { uri = vim.uri_from_fname(repo), name = "repo" } },
    handlers = {
      -- Not shown by Neovim (custom notifications): only to know when the review ended.
      ["redline/reviewState"] = function(_, params)
        if params.state == "finished" or params.state == "failed" or params.state == "cancelled" then
          finished = params
        end
      end,
      ["redline/findings"] = function() end,
    },
    on_exit = function(code, signal)
      exited = { code = code, signal = signal }
    end,
  })
  assert(client_id, "vim.lsp.start_client returned nil")

  vim.cmd("edit " .. vim.fn.fnameescape(repo .. "/clean.py"))
  local bufnr = vim.api.nvim_get_current_buf()
  assert(vim.lsp.buf_attach_client(bufnr, client_id), "buf_attach_client failed")
  local client
  wait_for("the client to initialize", function()
    client = vim.lsp.get_client_by_id(client_id)
    return client ~= nil and client.initialized
  end)
  -- What the start-up showed (its log line is a logMessage: not shown) is not counted below.
  vim.wait(300)
  result.shown_at_start = count_shown()

  result.step = "empty review"
  vim.lsp.buf.execute_command({ command = "redline.review", arguments = { { scope = "uncommitted" } } })
  wait_for("the review to finish", function() return finished ~= nil end)
  result.finished = { state = finished.state, findings = finished.findings }
  vim.wait(500) -- a message sent after the state would arrive now
  result.shown_after_review = count_shown()

  -- Each command error, through the default handlers; then wait for what else may come.
  result.errors = {}
  for _, case in ipairs({
    { name = "bad-scope", command = "redline.review", arguments = { "nope" } },
    { name = "bad-format", command = "redline.export", arguments = { { format = "pdf" } } },
    { name = "gone-finding", command = "redline.showSuggestedCode", arguments = { { id = "RL-0000000000" } } },
  }) do
    result.step = "command " .. case.name
    local before = count_shown()
    vim.lsp.buf.execute_command({ command = case.command, arguments = case.arguments })
    wait_for("the error of " .. case.name, function() return count_shown() > before end)
    vim.wait(700)
    local texts = {}
    for i = before + 1, count_shown() do
      table.insert(texts, result.shown[i].how .. " " .. result.shown[i].text)
    end
    result.errors[case.name] = texts
  end

  result.step = "stop"
  vim.lsp.stop_client(client_id)
  wait_for("the server to exit", function() return exited ~= nil end)
  result.exit = exited
  result.step = "done"
end

harness.main(run)
