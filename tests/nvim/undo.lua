-- Headless Neovim (0.7 API): an edit that is undone, or that puts the same code back, brings its
-- finding back. Driven by tests/test_neovim.py:
--
--   REDLINE_NVIM_SERVER=<redline executable> REDLINE_NVIM_REPO=<demo repo>
--   REDLINE_NVIM_OUT=<result.json> REDLINE_NVIM_SCENARIO=<name>
--   nvim --headless -i NONE --noplugin -u tests/nvim/undo.lua
--
-- Starts the server, opens app/reports.py, reviews the branch, records the diagnostics, then types
-- the scenario's keys as a user would (each step waits until the server has published what the
-- step leaves: a step that hides a finding waits for it to go), and records the diagnostics after
-- the last step (waiting up to SETTLE_MS for them to stop changing) as JSON before `qa!`.

local server = vim.env.REDLINE_NVIM_SERVER
local repo = vim.env.REDLINE_NVIM_REPO
local out = vim.env.REDLINE_NVIM_OUT
local scenario = vim.env.REDLINE_NVIM_SCENARIO
local TIMEOUT = 40000
local SETTLE_MS = 3000

local result = { scenario = scenario, step = "start", steps = {} }
-- tests/nvim/harness.lua, beside this script.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
local harness = dofile(here .. "harness.lua").new(result, out, TIMEOUT)
local write_result = harness.write_result
local function wait_for(what, check, timeout)
  harness.wait_for(what, check, timeout, 20)
end


local function diagnostics(bufnr)
  local rows = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(rows, {
      lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      code = d.code, message = d.message,
    })
  end
  table.sort(rows, function(a, b) return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col) end)
  return rows
end


-- Keys typed as a user types them ("x": run them now, as if typed, until typeahead is empty).
local function keys(text)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(text, true, false, true), "x", false)
end

-- 0-based lines of app/reports.py in the demo repository (scripts/demo.py).
local IMPORT_OS = 3       -- `import os`: unused import
local SHELL_CALL = 20     -- `    return subprocess.call(command, shell=True)`
local BARE_EXCEPT = 26    -- `    except:`

-- Each step: keys (or an ex command), then how many diagnostics the server shows afterwards.
local SCENARIOS = {
  dd_u = {
    { cursor = IMPORT_OS, keys = "dd", shown = 3 },
    { keys = "u", shown = 4 },
  },
  J_u = { -- the finding's line joined onto the line above it, then undone
    { cursor = SHELL_CALL - 1, keys = "J", shown = 3 },
    { keys = "u", shown = 4 },
  },
  join_next_u = { -- the next line joined onto the finding's line (`:join`), then undone
    { cursor = BARE_EXCEPT, ex = "join", shown = 3 },
    { keys = "u", shown = 4 },
  },
  ddp = { -- the finding's line moved one line down
    { cursor = IMPORT_OS, keys = "dd", shown = 3 },
    { keys = "p", shown = 4 },
  },
  S_retype = { -- the line's text deleted, then typed again
    { cursor = IMPORT_OS, keys = "S<Esc>", shown = 3 },
    { keys = "aimport os<Esc>", shown = 4 },
  },
  substitute_same = { -- the line replaced by identical text
    { cursor = IMPORT_OS, ex = "s/os/os/", shown = 4 },
  },
}

local function run()
  assert(server and repo and out and scenario, "REDLINE_NVIM_* must be set")
  local steps = assert(SCENARIOS[scenario], "unknown scenario " .. tostring(scenario))
  vim.lsp.set_log_level("WARN")
  local task_id, finished = nil, nil
  local client_id = vim.lsp.start_client({
    name = "redline",
    cmd = { server, "lsp" },
    root_dir = repo,
    workspace_folders = { { uri = vim.uri_from_fname(repo), name = "demo" } },
    handlers = {
      ["redline/reviewState"] = function(_, params)
        if params.taskId == task_id and (params.state == "finished" or params.state == "failed" or params.state == "cancelled") then
          finished = params
        end
      end,
      ["redline/findings"] = function() end,
      ["window/showMessage"] = function() end,
    },
  })
  assert(client_id, "vim.lsp.start_client returned nil")

  vim.cmd("edit " .. vim.fn.fnameescape(repo .. "/app/reports.py"))
  local bufnr = vim.api.nvim_get_current_buf()
  assert(vim.lsp.buf_attach_client(bufnr, client_id), "buf_attach_client failed")
  local client
  wait_for("the client to initialize", function()
    client = vim.lsp.get_client_by_id(client_id)
    return client ~= nil and client.initialized
  end)

  local response = client.request_sync("workspace/executeCommand", {
    command = "redline.review",
    arguments = { { scope = "branch", base = "main" } },
  }, 10000, bufnr)
  assert(response and not response.err, "redline.review failed: " .. vim.inspect(response))
  task_id = response.result.taskId
  wait_for("the review to finish", function() return finished ~= nil end)
  assert(finished.state == "finished", "the review ended " .. finished.state)
  wait_for("4 diagnostics", function() return #vim.diagnostic.get(bufnr) == 4 end)
  result.before = diagnostics(bufnr)
  result.text_before = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)

  for i, step in ipairs(steps) do
    result.step = "step " .. i
    if step.cursor then
      vim.api.nvim_win_set_cursor(0, { step.cursor + 1, 0 })
    end
    if step.keys then
      keys(step.keys)
    else
      vim.cmd(step.ex)
    end
    local last = i == #steps
    if last then
      -- Past Neovim's didChange debounce (150 ms) and the server's publish interval, even when
      -- the count is already the expected one (an edit that keeps the text would withdraw it).
      vim.wait(1000, function() return false end, 20)
    end
    -- An intermediate step must have reached the server before the next one is typed; the last
    -- one is waited for only as long as SETTLE_MS (a finding that never comes back is the bug).
    local ok = vim.wait(last and SETTLE_MS or TIMEOUT, function()
      return #vim.diagnostic.get(bufnr) == step.shown
    end, 20)
    table.insert(result.steps, { shown = #vim.diagnostic.get(bufnr), expected = step.shown, ok = ok })
    if not ok and not last then
      error("step " .. i .. ": " .. #vim.diagnostic.get(bufnr) .. " diagnostics, expected " .. step.shown)
    end
  end
  result.after = diagnostics(bufnr)
  result.text_after = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  vim.lsp.stop_client(client_id)
  result.step = "done"
end

harness.main(run)
