-- Headless Neovim running the README's "Neovim 0.7–0.10" snippet as a user would; driven by
-- tests/test_neovim.py, which extracts the snippet from README.md (so the README cannot drift):
--
--   REDLINE_NVIM_SNIPPET=<snippet.lua> REDLINE_NVIM_REPO=<demo repo> REDLINE_NVIM_OUT=<result.json>
--   PATH=<dir of redline>:$PATH nvim --headless -i NONE --noplugin -u tests/nvim/readme_snippet.lua
--
-- Loads the snippet, opens three files of different filetypes in the demo repository, counts the
-- Redline clients and the server processes Neovim started, runs the snippet's `<leader>rb`
-- mapping from the second buffer, and writes every diagnostic it then sees as JSON before `qa!`.

local snippet = vim.env.REDLINE_NVIM_SNIPPET
local repo = vim.env.REDLINE_NVIM_REPO
local out = vim.env.REDLINE_NVIM_OUT
local TIMEOUT = tonumber(vim.env.REDLINE_NVIM_TIMEOUT_MS or "40000")
local FILES = { "README.md", "app/reports.py", "poetry.lock" } -- markdown, python, another

local result = { version = vim.version(), states = {}, step = "start" }
-- tests/nvim/harness.lua, beside this script.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
local harness = dofile(here .. "harness.lua").new(result, out, TIMEOUT)
local write_result = harness.write_result
local wait_for = harness.wait_for



local function redline_clients()
  local found = {}
  for _, client in pairs(vim.lsp.get_active_clients()) do
    if client.name == "redline" then
      table.insert(found, client)
    end
  end
  return found
end

-- The processes Neovim itself started whose command line runs `lsp`: the servers, counted from
-- /proc rather than from Neovim's own bookkeeping.
local function server_processes()
  local me = vim.fn.getpid()
  local pids = {}
  for _, stat in ipairs(vim.fn.glob("/proc/[0-9]*/stat", false, true)) do
    local fh = io.open(stat)
    if fh then
      local line = fh:read("*l") or ""
      fh:close()
      local pid, ppid = line:match("^(%d+) %b() %S+ (%d+)")
      if ppid and tonumber(ppid) == me then
        local cmd = io.open("/proc/" .. pid .. "/cmdline")
        local args = cmd and cmd:read("*a") or ""
        if cmd then cmd:close() end
        if args:find("\0lsp\0", 1, true) or args:find("\0lsp$") then
          table.insert(pids, tonumber(pid))
        end
      end
    end
  end
  return pids
end

local function all_diagnostics()
  local rows = {}
  for _, d in ipairs(vim.diagnostic.get(nil)) do
    local name = vim.api.nvim_buf_get_name(d.bufnr):sub(#repo + 2)
    table.insert(rows, { file = name, lnum = d.lnum, col = d.col, source = d.source, message = d.message })
  end
  table.sort(rows, function(a, b) return a.file .. string.format("%06d", a.lnum) < b.file .. string.format("%06d", b.lnum) end)
  return rows
end

local function run()
  assert(snippet and repo and out, "REDLINE_NVIM_SNIPPET, REDLINE_NVIM_REPO and REDLINE_NVIM_OUT must be set")
  vim.lsp.set_log_level("INFO") -- so the log shows at which level the server's start-up line lands
  local finished = nil
  vim.lsp.handlers["redline/reviewState"] = function(_, params)
    table.insert(result.states, params.state)
    if params.state == "finished" or params.state == "failed" or params.state == "cancelled" then
      finished = params
    end
  end
  vim.lsp.handlers["redline/findings"] = function() end

  result.step = "load the snippet"
  dofile(snippet)

  result.step = "open"
  local buffers = {}
  for _, file in ipairs(FILES) do
    vim.cmd("edit " .. vim.fn.fnameescape(repo .. "/" .. file))
    table.insert(buffers, vim.api.nvim_get_current_buf())
  end
  result.filetypes = {}
  for _, bufnr in ipairs(buffers) do
    table.insert(result.filetypes, vim.bo[bufnr].filetype)
  end
  wait_for("every buffer to have an initialized Redline client", function()
    for _, bufnr in ipairs(buffers) do
      local attached = false
      for _, client in ipairs(redline_clients()) do
        attached = attached or (client.initialized and vim.lsp.buf_is_attached(bufnr, client.id))
      end
      if not attached then return false end
    end
    return true
  end)
  result.clients = #redline_clients()
  result.root_dir = redline_clients()[1].config.root_dir
  result.server_processes = #server_processes()

  result.step = "<leader>rb from the second buffer"
  vim.cmd("buffer " .. buffers[2])
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<leader>rb", true, false, true), "mx", false)
  wait_for("the review to finish", function() return finished ~= nil end)
  result.finished = { state = finished.state, findings = finished.findings, error = finished.error }
  assert(finished.state == "finished", "the review ended " .. finished.state .. ": " .. tostring(finished.error))
  wait_for(finished.findings .. " diagnostics", function() return #vim.diagnostic.get(nil) >= finished.findings end)
  -- A second server's copies would arrive after the first's: give them time to show up.
  vim.wait(1000, function() return false end, 50)
  result.diagnostics = all_diagnostics()
  result.clients_after = #redline_clients()
  result.server_processes_after = #server_processes()

  result.step = "stop"
  local ids = {}
  for _, client in ipairs(redline_clients()) do
    table.insert(ids, client.id)
  end
  vim.lsp.stop_client(ids)
  wait_for("the servers to exit", function() return #server_processes() == 0 end)
  result.step = "done"
end

harness.main(run)
