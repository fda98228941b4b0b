"""A recording proxy between an editor and its language server, for tests/test_kate.py.

`python record_proxy.py DIR COMMAND...` runs COMMAND and copies the editor's bytes to it and its
stdout and stderr back, each also appended to DIR/in.bin, DIR/out.bin and DIR/err.bin: what
the editor sent, what the server answered, and what the server wrote to stderr (which Kate shows
in its output pane)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import BinaryIO


def _pump(src: BinaryIO, dst: BinaryIO, log_path: str) -> None:
    with open(log_path, "ab", buffering=0) as log:
        while data := os.read(src.fileno(), 65536):
            log.write(data)
            dst.write(data)
            dst.flush()
    dst.close()


def main() -> int:
    record, command = sys.argv[1], sys.argv[2:]
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdin and proc.stdout and proc.stderr
    to_server = threading.Thread(
        target=_pump, args=(sys.stdin.buffer, proc.stdin, f"{record}/in.bin"), daemon=True
    )
    to_editor = threading.Thread(
        target=_pump, args=(proc.stdout, sys.stdout.buffer, f"{record}/out.bin")
    )
    errors = threading.Thread(
        target=_pump, args=(proc.stderr, sys.stderr.buffer, f"{record}/err.bin")
    )
    for t in (to_server, to_editor, errors):
        t.start()
    code = proc.wait()
    to_editor.join()
    errors.join()
    return code


if __name__ == "__main__":
    sys.exit(main())
