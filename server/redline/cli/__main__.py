"""`python -m redline.cli`: the same command line as the installed `redline` script."""

from redline.cli.main import main

raise SystemExit(main())
