-- Run by .ci/neovim inside headless Neovim with the documented init.lua: writes the
-- buffer's filetype, whether the flags server attached, and the completion labels at the
-- end of the buffer's last line, to $NVIM_CHECK_OUT; then quits.
local out = {}
local function say(s) table.insert(out, s) end
say("filetype " .. vim.bo.filetype)
local attached = vim.wait(30000, function()
  local clients = vim.lsp.buf_get_clients(0)
  for _, c in pairs(clients) do
    if c.initialized then return true end
  end
  return false
end, 50)
say("attached " .. tostring(attached))
local line = vim.api.nvim_buf_line_count(0) - 1
local text = vim.api.nvim_buf_get_lines(0, line, line + 1, false)[1]
local params = { textDocument = vim.lsp.util.make_text_document_params(), position = { line = line, character = #text } }
local labels = {}
for _, r in pairs(vim.lsp.buf_request_sync(0, "textDocument/completion", params, 20000) or {}) do
  for _, item in ipairs((r.result or {}).items or r.result or {}) do table.insert(labels, item.label) end
end
say("completion " .. table.concat(labels, ","))
local f = io.open(os.getenv("NVIM_CHECK_OUT"), "w")
f:write(table.concat(out, "\n") .. "\n")
f:close()
vim.cmd("qa!")
