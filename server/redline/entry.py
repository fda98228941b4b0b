"""The `redline` console script: the CLI's modules loaded with the collector paused.

Loading them (pydantic and the models built on it, most of a review's start-up) allocates
hundreds of thousands of objects that live until the process ends and hold no garbage; with
the collector on, allocation counts trigger collections that traverse them again and again
(~15 ms). Paused here, then frozen by `cli.main` like everything else allocated before the
work starts. pydantic's plugin discovery (an entry-point scan of every installed package, ~10
ms) is skipped for the same reason: Redline's models use no plugin. Both only in the console
script's own process; `redline.cli` imported elsewhere (tests, `python -m`) behaves as before.
"""

from __future__ import annotations

import gc
import os
import sys


def main() -> int:
    ours = "PYDANTIC_DISABLE_PLUGINS" not in os.environ
    if ours:  # not passed on to the tools and models' clients this process starts
        os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
    gc.disable()
    try:
        from redline.cli.main import main as cli_main
    except KeyboardInterrupt:  # Ctrl+C while the modules load: the CLI's one line, no traceback
        sys.stderr.write("redline: interrupted\n")
        return 130
    except Exception as exc:
        # A broken installation (a dependency missing or half upgraded): one line and exit 2,
        # as `cli.main` says every other failure, not an import traceback.
        first = str(exc).strip().split("\n", 1)[0][:300]
        sys.stderr.write(f"redline: cannot start: {type(exc).__name__}: {first}\n")
        return 2
    finally:
        gc.enable()
        if ours:
            del os.environ["PYDANTIC_DISABLE_PLUGINS"]
    return cli_main()
