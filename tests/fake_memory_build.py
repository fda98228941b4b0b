"""A stand-in for `redline memory build`, run through memory_process's real bootstrap by
tests/test_memory_refresh.py: it records how it was started (arguments, working directory,
priority, I/O class, parent) as one JSON line, optionally starts a grandchild, then sleeps
and exits as the environment says.

FAKE_BUILD_LOG: the JSON-lines file; FAKE_BUILD_SLEEP: seconds (default 0);
FAKE_BUILD_EXIT: exit code (default 0); FAKE_BUILD_STDERR: what to write to stderr first;
FAKE_BUILD_GRANDCHILD=1: start `sleep 600` and record its pid."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def _io_class() -> str:
    try:
        out = subprocess.run(
            ["ionice", "-p", str(os.getpid())], capture_output=True, text=True, check=False
        )
    except OSError:
        return "unknown"
    return out.stdout.strip() or "unknown"


def main() -> int:
    record = {
        "args": sys.argv[1:],
        "cwd": os.getcwd(),
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "pgid": os.getpgid(0),
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "io": _io_class(),
        "path0": sys.path[0],
        "stdin": os.read(0, 10).decode(),  # closed: nothing
        "start": time.monotonic(),
    }
    if os.environ.get("FAKE_BUILD_GRANDCHILD") == "1":
        child = subprocess.Popen(["sleep", "600"])
        record["grandchild"] = child.pid
    log = os.environ["FAKE_BUILD_LOG"]
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"event": "start", **record}) + "\n")
    sys.stderr.write(os.environ.get("FAKE_BUILD_STDERR", ""))
    sys.stderr.flush()
    time.sleep(float(os.environ.get("FAKE_BUILD_SLEEP", "0")))
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"event": "end", "pid": os.getpid(), "end": time.monotonic()}) + "\n")
    return int(os.environ.get("FAKE_BUILD_EXIT", "0"))
