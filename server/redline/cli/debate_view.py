"""`redline debate` on the terminal: the debate drawn from the engine's `DebateEvent`s as they
arrive — a header per turn, the text as it streams, a rule between turns, the user's
interjections and the engine's notes marked, then the anonymous positions and the neutral
summary.

It writes to stderr (stdout carries the report, so `redline debate > report.md` still shows
the debate live), as plain text; on a terminal, the live progress line (progress_line.py) is
erased through `before_write` first, so the two never draw over each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from redline.debate.events import DebateEvent
from redline.money import spent as money_spent
from redline.plural import plural
from redline.redaction import redact
from redline.report.controls import escape_controls

WIDTH = 72


def clean(text: str) -> str:
    """Text safe to write to a terminal, secrets redacted (the report is redacted too).

    Model output is streamed to the user's terminal: an escape sequence in it (asked for by a
    hostile diff, say) could move the cursor, retitle the window or set the clipboard. The
    report's rule (report/controls.py) spells every control character out."""
    return escape_controls(redact(text))


def rule(title: str = "", char: str = "─") -> str:
    if not title:
        return char * WIDTH
    head = f"{char * 2} {title} "
    return head + char * max(3, WIDTH - len(head))


class DebateView:
    """Fed every `DebateEvent` (it is the engine's `on_event`); never raises into the engine."""

    def __init__(self, stream: TextIO, *, before_write: Callable[[], None] | None = None) -> None:
        self.stream = stream
        self.before_write = before_write  # erases a live progress line drawn on the stream
        self._at_line_start = True
        self._streamed = False  # the current turn's text arrived as deltas

    def __call__(self, event: DebateEvent) -> None:
        # EventKind.TURN_STARTED → _on_turn_started; an event kind it does not know is skipped.
        handler = getattr(self, f"_on_{event.kind.name.lower()}", None)
        if handler is not None:
            handler(event.data)
            self.stream.flush()

    # -- writing ---------------------------------------------------------------------------

    def _write(self, text: str) -> None:
        if not text:
            return
        if self.before_write is not None:
            self.before_write()
        self.stream.write(text)
        self._at_line_start = text.endswith("\n")

    def _line(self, text: str = "") -> None:
        """`text` on a line of its own (ending the line being streamed, if any)."""
        if not self._at_line_start:
            self._write("\n")
        self._write(text + "\n")

    def _block(self, title: str, text: str) -> None:
        self._line()
        self._line(rule(title, "═"))
        self._line(clean(text).strip())

    # -- events ----------------------------------------------------------------------------

    def _on_started(self, data: dict[str, Any]) -> None:
        debaters = data.get("debaters") or []
        names = ", ".join(
            f"{clean(str(d.get('label', '')))} ({clean(str(d.get('model', '')))})"
            for d in debaters
            if isinstance(d, dict)
        )
        n = data.get("rounds")
        rounds = plural(n, "round") if isinstance(n, int) else f"{clean(str(n))} rounds"
        self._line(
            f"Debate over {clean(str(data.get('scopeLabel', '')))}: "
            f"{plural(len(debaters), 'debater')}, {rounds} — {names}"
        )

    def _on_turn_started(self, data: dict[str, Any]) -> None:
        self._streamed = False
        speaker = clean(str(data.get("speaker", "")))
        model = clean(str(data.get("model", "")))
        label = clean(str(data.get("label", "")))
        self._line()
        # The configured name only when the label does not already say it ("Security").
        who = model if label.lower().replace(" ", "-") == speaker else f"{speaker}, {model}"
        self._line(rule(f"Round {data.get('round')} · {label} ({who})"))

    def _on_delta(self, data: dict[str, Any]) -> None:
        self._streamed = True
        self._write(clean(str(data.get("text", ""))))

    def _on_turn_finished(self, data: dict[str, Any]) -> None:
        kind = str(data.get("kind", "turn"))
        if not self._streamed and data.get("text"):
            self._write(clean(str(data["text"])))
        note = clean(str(data.get("note") or ""))
        if kind == "pass":
            self._line("(passes: nothing to add)")
        elif kind == "skipped":
            self._line(f"[skipped{': ' + note if note else ''}]")
        elif kind == "stopped":
            self._line("[cut short: the debate was ended]")
        elif note:
            self._line(f"[{note}]")
        seconds = float(str(data.get("latencyMs") or 0)) / 1000
        self._line(rule(f"{_count(data.get('tokens'))} tokens, {seconds:.1f} s"))
        self._streamed = False

    def _on_interjection(self, data: dict[str, Any]) -> None:
        self._line(f"» You (before round {data.get('round')}): {clean(str(data.get('text', '')))}")

    def _on_note(self, data: dict[str, Any]) -> None:
        self._line(f"· note: {clean(str(data.get('text', '')))}")

    def _on_stopped(self, data: dict[str, Any]) -> None:
        text = clean(str(data.get("text") or data.get("reason") or ""))
        self._line()
        self._line(f"■ The debate ended: {text}")

    def _on_summaries(self, data: dict[str, Any]) -> None:
        positions = data.get("positions") or []
        self._line()
        self._line(rule("Final positions (anonymous)", "═"))
        for p in positions:
            if isinstance(p, dict):
                self._line()
                self._line(f"{clean(str(p.get('label', '')))}:")
                self._line(clean(str(p.get("text", ""))).strip())

    def _on_summary(self, data: dict[str, Any]) -> None:
        title = (
            "Summary (the summarizer failed: the positions, listed)"
            if data.get("failed")
            else "Neutral summary"
        )
        self._block(title, str(data.get("markdown", "")))

    def _on_final(self, data: dict[str, Any]) -> None:
        findings = data.get("findings")
        count = len(findings) if isinstance(findings, list) else findings
        cost = data.get("costUsd")
        tokens = data.get("tokens")
        said = money_spent(
            None if cost is None else float(str(cost)), tokens if isinstance(tokens, int) else 0
        )
        spent = f", {said}" if said else ""
        self._line()
        noun = "finding" if count == 1 else "findings"
        self._line(f"{count} {noun}; {_count(data.get('tokens'))} tokens{spent}")


def _count(value: object) -> str:
    """A token count as people read it (17,328)."""
    return f"{value:,}" if isinstance(value, int) else "0"
