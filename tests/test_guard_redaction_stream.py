"""The CLI's redacting stderr (redline.redaction.stream), rule by rule: every way of writing to
it passes the redactor.

Each test states one rule a mutant of stream.py broke. Run by `make mutation` for stream.py
(scripts/mutation.toml).
"""

from __future__ import annotations

import io

from guard_redaction import GHP
from redline.redaction.stream import RedactingStream


def test_writelines_masks_every_line_and_keeps_the_rest() -> None:
    target = io.StringIO()
    RedactingStream(target).writelines([f"one {GHP}\n", "two\n", f"three {GHP}\n"])
    out = target.getvalue()
    assert GHP not in out
    lines = out.splitlines()
    assert len(lines) == 3 and lines[1] == "two"
    assert all(
        line.startswith(word + " [REDACTED:github-token:")
        for line, word in zip(lines[::2], ["one", "three"], strict=True)
    )
