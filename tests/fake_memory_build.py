"""A stand-in for `redline memory worker`, run through memory_process's real bootstrap by
tests/test_memory_refresh.py: for each request line it records the build it stands for and how
its process runs (arguments, working directory, priority, I/O class, parent, pid) as one JSON
line, optionally starts a grandchild, sleeps, then answers — or dies, as the environment says.

FAKE_BUILD_LOG: the JSON-lines file; FAKE_BUILD_SLEEP: seconds per request (default 0);
FAKE_BUILD_EXIT: die with this exit code at the first request (default 0: answer);
FAKE_BUILD_STDERR: what it writes to stderr before dying;
FAKE_BUILD_GRANDCHILD=1: start `sleep 600` per request and record its pid."""

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
    """`memory worker --repo ROOT`: answer each request line until stdin closes."""
    assert sys.argv[1:3] == ["memory", "worker"] and sys.argv[3] == "--repo", sys.argv
    repo = sys.argv[4]
    log = os.environ["FAKE_BUILD_LOG"]
    for line in sys.stdin:
        paths = json.loads(line)["paths"]
        # Recorded as the one-shot build it stands for (what the tests compare).
        args = ["memory", "build", "--quiet", "--repo", repo]
        if paths is not None:
            args += ["--", *paths]
        record = {
            "args": args,
            "cwd": os.getcwd(),
            "pid": os.getpid(),
            "ppid": os.getppid(),
            "pgid": os.getpgid(0),
            "nice": os.getpriority(os.PRIO_PROCESS, 0),
            "io": _io_class(),
            "path0": sys.path[0],
            "start": time.monotonic(),
        }
        if os.environ.get("FAKE_BUILD_GRANDCHILD") == "1":
            child = subprocess.Popen(["sleep", "600"])
            record["grandchild"] = child.pid
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"event": "start", **record}) + "\n")
        time.sleep(float(os.environ.get("FAKE_BUILD_SLEEP", "0")))
        code = int(os.environ.get("FAKE_BUILD_EXIT", "0"))
        if code:  # the worker dies (a bug, the OOM killer): its stderr says why
            sys.stderr.write(os.environ.get("FAKE_BUILD_STDERR", ""))
            sys.stderr.flush()
            return code
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"event": "end", "pid": os.getpid(), "end": time.monotonic()}))
            fh.write("\n")
        sys.stdout.write(json.dumps({"ok": True, "summary": "fake", "seconds": 0.0}) + "\n")
        sys.stdout.flush()
    return 0
