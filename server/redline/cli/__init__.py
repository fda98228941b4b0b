"""The command line: `redline review`, `ask`, `debate`, `eval`, `post`, `history`, `config`.

One of Redline's three entry points over the one engine (the others: the language server in
`redline.lsp`, and the VS Code extension in editor-client/, which talks to that server).
`main.py` wires the subcommands; each command with options of its own has its module here.
"""
