-- What every headless Neovim script here shares: its result file (JSON, read by the Python
-- test), waiting for a condition with a named step, and running `run` once Neovim is up, then
-- writing the result (the error too) and quitting.
local M = {}

function M.new(result, out, timeout)
  local h = {}

  function h.write_result()
    local fh = assert(io.open(out, "w"))
    fh:write(vim.fn.json_encode(result))
    fh:close()
  end

  -- `ms` and `interval` default to the script's timeout and 50 ms.
  function h.wait_for(what, check, ms, interval)
    result.step = "waiting for " .. what
    local limit = ms or timeout
    if not vim.wait(limit, check, interval or 50) then
      error("timed out after " .. limit .. " ms waiting for " .. what)
    end
  end

  function h.main(run)
    vim.schedule(function()
      local ok, err = xpcall(run, debug.traceback)
      result.ok = ok
      if not ok then
        result.error = tostring(err)
      end
      pcall(h.write_result)
      vim.cmd("qa!")
    end)
  end

  return h
end

return M
