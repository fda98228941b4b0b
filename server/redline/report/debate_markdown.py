"""The debate's parts of the Markdown report (report/markdown.py puts them in place).

After the headline: the neutral summary (or the plain listing that stood in for it). After
the findings: who debated (model, calls, tokens, cost, why one left), the transcript turn by
turn, the anonymous final positions, and how the debate ended. Every model text is sanitized
and quoted (report/markup.py `quoted`), so a turn's headings stay inside the turn.
"""

from __future__ import annotations

from redline.model import DebateParticipant, DebateRecord, DebateTurn
from redline.money import UNPRICED
from redline.report.markup import dollars, inline_code, quoted, table_cell
from redline.report.sanitize import sanitize_inline, sanitize_markdown

STOP_REASONS = {
    "rounds": "all planned rounds were held",
    "passed": "every debater passed (nothing to add)",
    "budget": "the model budget ran out",
    "user": "stopped by the user",
    "debaters": "fewer than two debaters were left",
    "cancelled": "cancelled",
}

_KINDS = {
    "turn": "",
    "pass": " — passed",
    "skipped": " — skipped",
    "stopped": " — cut short (stopped by the user)",
}


def debate_summary(debate: DebateRecord, out: list[str]) -> None:
    """The neutral summary section (placed before the findings)."""
    if not debate.summary_markdown.strip():
        return
    title = "Neutral summary"
    if debate.summarizer_error is not None:
        title += " (not available: the final positions are listed instead)"
    out += [f"## {title}", "", sanitize_markdown(debate.summary_markdown).strip(), ""]


def debate_sections(debate: DebateRecord, out: list[str]) -> None:
    """Participants, transcript, final positions and how it ended (after the findings)."""
    out += ["## Debate", ""]
    _participants(debate.participants, out)
    _transcript(debate.turns, out)
    _positions(debate, out)
    _ending(debate, out)


def _participants(participants: list[DebateParticipant], out: list[str]) -> None:
    out += ["### Participants", ""]
    if not participants:
        out += ["No debaters took part.", ""]
        return
    out += ["| Debater | Model | Calls | Tokens | Cost | Out |", "|---|---|--:|--:|--:|---|"]
    for p in participants:
        who = sanitize_inline(p.label)
        if p.name.lower() != p.label.lower():
            who += f" ({inline_code(p.name)})"
        cost = dollars(p.cost_usd, 4) if p.cost_usd is not None else UNPRICED if p.tokens else "—"
        out_reason = sanitize_inline(p.out) if p.out else "—"
        cells = [who, inline_code(p.model), str(p.calls), f"{p.tokens:,}", cost, out_reason]
        out.append("| " + " | ".join(table_cell(c) for c in cells) + " |")
    out.append("")


def _turn_heading(turn: DebateTurn) -> str:
    if turn.kind == "interjection":
        return f"#### Round {turn.round} · the user interjects"
    kind = _KINDS.get(turn.kind, f" — {sanitize_inline(turn.kind)}")
    return f"#### Round {turn.round} · {sanitize_inline(turn.label)}{kind}"


def _transcript(turns: list[DebateTurn], out: list[str]) -> None:
    out += ["### Transcript", ""]
    if not turns:
        out += ["No turns were taken.", ""]
        return
    for turn in turns:
        out += [_turn_heading(turn), ""]
        if turn.note:
            out += [f"*{sanitize_inline(turn.note)}*", ""]
        if turn.text.strip():
            out += [quoted(sanitize_markdown(turn.text)), ""]
        elif turn.kind in ("turn", "stopped"):
            out += ["*(nothing said)*", ""]


def _positions(debate: DebateRecord, out: list[str]) -> None:
    out += ["### Final positions (anonymous)", ""]
    if not debate.positions:
        out += ["No debater stated a final position.", ""]
        return
    out += [
        "Stated by each debater at the end, with names removed and the order shuffled, as "
        "the summarizer read them.",
        "",
    ]
    for position in debate.positions:
        out += [f"#### {sanitize_inline(position.label)}", ""]
        out += [quoted(sanitize_markdown(position.text)), ""]


def _ending(debate: DebateRecord, out: list[str]) -> None:
    out += ["### How it ended", ""]
    reason = STOP_REASONS.get(debate.stop_reason, sanitize_inline(debate.stop_reason) or "—")
    held = f"{debate.rounds_held} of {debate.rounds_planned} round"
    held += "" if debate.rounds_planned == 1 else "s"
    out.append(f"- Rounds: {held} · stopped: {reason}")
    if debate.summarizer_model:
        out.append(f"- Summarizer: {inline_code(debate.summarizer_model)}")
    if debate.summarizer_error is not None:
        out.append(f"- Summary failed: {sanitize_inline(debate.summarizer_error)}")
    for note in debate.notes:
        out.append(f"- Note: {sanitize_inline(note)}")
    out.append("")
