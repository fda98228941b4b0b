-- Headless Neovim (0.7 API): the language server keeps project memory fresh while a user edits.
-- Driven by tests/test_neovim_memory.py:
--
--   REDLINE_NVIM_SERVER=<redline executable> REDLINE_NVIM_REPO=<repository>
--   REDLINE_NVIM_OUT=<result.json> nvim --headless -i NONE --noplugin -u tests/nvim/memory.lua
--
-- Opens app.py of a git repository, types a new function with a distinctive docstring (keys,
-- in insert mode, as a user does), saves, waits until the server says its memory refresh has
-- nothing left to do, and asks the installed CLI (`redline memory search`, same cache) for it;
-- then renames the function with `:s`, saves, and searches again. Nobody runs a build by hand.

local server = vim.env.REDLINE_NVIM_SERVER
local repo = vim.env.REDLINE_NVIM_REPO
local out = vim.env.REDLINE_NVIM_OUT
local TIMEOUT = tonumber(vim.env.REDLINE_NVIM_TIMEOUT_MS or "120000")

local result = { version = vim.version(), step = "start", refreshes = {} }
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
local harness = dofile(here .. "harness.lua").new(result, out, TIMEOUT)
local wait_for = harness.wait_for

local function memory_state(client, bufnr)
  local answer = client.request_sync("redline/debugInfo", {}, 5000, bufnr)
  if not answer or answer.err or not answer.result then
    return nil
  end
  return answer.result.memoryRefresh
end

-- Until the refresh has nothing running or due (what was saved is in memory).
local function wait_refreshed(client, bufnr, what)
  local last
  wait_for(what, function()
    last = memory_state(client, bufnr)
    local folder = last and last.folders[1]
    if folder and folder.failures > 0 then
      error("the memory refresh failed: " .. tostring(folder.lastError))
    end
    return last ~= nil and last.state == "idle"
  end, nil, 200)
  table.insert(result.refreshes, last)
end

local function search(query)
  local text = vim.fn.system({ server, "memory", "search", query, "--repo", repo, "--format", "json" })
  return { code = vim.v.shell_error, output = text }
end

local function type_keys(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "xt", false)
end

local function run()
  assert(server and repo and out, "REDLINE_NVIM_SERVER, REDLINE_NVIM_REPO and REDLINE_NVIM_OUT must be set")
  vim.lsp.set_log_level("WARN")
  local exited = nil
  result.step = "start_client"
  local client_id = vim.lsp.start_client({
    name = "redline",
    cmd = { server, "lsp" },
    root_dir = repo,
    workspace_folders = { { uri = vim.uri_from_fname(repo), name = "repo" } },
    init_options = { memoryIdleDelay = 0.5 },
    handlers = {
      ["redline/reviewState"] = function() end,
      ["redline/findings"] = function() end,
    },
    on_exit = function(code, signal)
      exited = { code = code, signal = signal }
    end,
  })
  assert(client_id, "vim.lsp.start_client returned nil")

  vim.cmd("edit " .. vim.fn.fnameescape(repo .. "/app.py"))
  local bufnr = vim.api.nvim_get_current_buf()
  assert(vim.lsp.buf_attach_client(bufnr, client_id), "buf_attach_client failed")
  local client
  wait_for("the client to initialize", function()
    client = vim.lsp.get_client_by_id(client_id)
    return client ~= nil and client.initialized
  end)

  result.step = "typing the new function"
  type_keys(
    "Go<CR>def frobnicate_the_quokka(orchard):<CR>"
      .. '    """Count the marsupials hopping across the moonlit orchard."""<CR>'
      .. "    return len(orchard)<CR><Esc>"
  )
  vim.cmd("write")
  wait_refreshed(client, bufnr, "the memory refresh after the first save")
  result.first = search("marsupials hopping across the moonlit orchard")
  result.first_by_name = search("frobnicate_the_quokka")

  result.step = "renaming it"
  vim.cmd("%s/frobnicate_the_quokka/tally_orchard_wallabies/")
  vim.cmd("write")
  wait_refreshed(client, bufnr, "the memory refresh after the rename")
  result.second = search("marsupials hopping across the moonlit orchard")
  result.second_by_old_name = search("frobnicate_the_quokka")
  result.text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")

  result.step = "stopping the client"
  client.stop()
  wait_for("the server to exit", function()
    return exited ~= nil
  end, 10000)
  result.exit = exited
end

harness.main(run)
