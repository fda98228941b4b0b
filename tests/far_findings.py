"""A file whose findings lie far apart, as in issue 25's Kate report: an unused import at the
top (it has a fix), `shell=True` and a bare `except` ~350 lines down, an f-string without
placeholders at the end (a fix). Shared by tests/test_editor_requests.py and tests/test_kate.py."""

from __future__ import annotations

DISMISS_COMMANDS = {"redline.dismissFinding", "redline.dismissAllLikeThis", "redline.dismissFile"}

FILLER = "".join(f"value_{i} = {i}\n" for i in range(340))
APP = (
    "import os\nimport subprocess\n\n\n" + FILLER + "def run(cmd):\n"
    "    return subprocess.call(cmd, shell=True)\n\n\n"
    "def safe():\n    try:\n        return run('ls')\n    except:\n        return None\n\n\n"
    'print(f"done")\n'
)
LINES = APP.split("\n")
IMPORT_LINE = 0
SHELL_LINE = LINES.index("    return subprocess.call(cmd, shell=True)")
FSTRING_LINE = LINES.index('print(f"done")')
