"""`python -m redline.lsp`: the language server over stdio (same as `redline lsp`)."""

from redline.lsp.server import main

raise SystemExit(main())
