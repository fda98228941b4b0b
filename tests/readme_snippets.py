"""The editor snippets of README.md, as a user copies them: tests/test_neovim.py and
tests/test_emacs.py run these very blocks, so the README cannot drift from what works."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def snippet(heading: str, language: str) -> str:
    """The first fenced `language` block after the paragraph starting with `**heading**`."""
    text = README.read_text(encoding="utf-8")
    start = text.find(f"\n**{heading}**")
    assert start >= 0, f"README.md has no paragraph starting with **{heading}**"
    fence = f"\n```{language}\n"
    begin = text.find(fence, start)
    assert begin >= 0, f"README.md has no ```{language} block after **{heading}**"
    body_start = begin + len(fence)
    end = text.find("\n```\n", body_start)
    assert end >= 0, f"the ```{language} block after **{heading}** is not closed"
    # The block belongs to that paragraph, not to a later heading's.
    assert text.find("\n**", start + 1, begin) < 0, f"no ```{language} block right under {heading}"
    return text[body_start : end + 1]
