"""The debate in the reports: the Markdown a person reads (report/debate_markdown.py placed by
report/markdown.py) and the JSON that carries the whole record."""

from __future__ import annotations

import json

from redline.model import (
    Category,
    Coverage,
    DebateParticipant,
    DebatePosition,
    DebateRecord,
    DebateTurn,
    Finding,
    Review,
    Severity,
)
from redline.report import render

SUMMARY = "### Overview\n\nAll agree the eval must go.\n\n### Action items\n\n1. **Replace eval**"


def _review(**debate: object) -> Review:
    record = DebateRecord(
        rounds_planned=3,
        rounds_held=2,
        stop_reason="user",
        participants=[
            DebateParticipant(
                name="security",
                label="Security",
                model="openai/gpt-4o",
                calls=3,
                tokens=12345,
                cost_usd=0.0123,
            ),
            DebateParticipant(
                name="perf-bot",
                label="Speed",
                model="ollama/llama|3",
                calls=1,
                tokens=99,
                cost_usd=None,
                out="its model failed: HTTP 500",
            ),
        ],
        turns=[
            DebateTurn(
                round=1,
                speaker="security",
                label="Security",
                kind="turn",
                text="# Not a heading\nThe eval is dangerous.\n<img src=x onerror=y>",
            ),
            DebateTurn(
                round=1, speaker="perf-bot", label="Speed", kind="skipped", note="its model failed"
            ),
            DebateTurn(
                round=1,
                speaker="user",
                label="You",
                kind="interjection",
                text="What about the loop?",
            ),
            DebateTurn(
                round=2,
                speaker="security",
                label="Security",
                kind="stopped",
                text="The loop is fine, but [click](command:evil)",
            ),
        ],
        positions=[
            DebatePosition(label="Debater A", text="I hold that eval must go."),
            DebatePosition(label="Debater B", text="I concede the loop."),
        ],
        summary_markdown=SUMMARY,
        summarizer_model="openai/judge",
        notes=["turns of round 1 were compacted for Speed"],
    )
    record = record.model_copy(update=debate)
    finding = Finding(
        id="RL-1", file="app.py", line=6, end_line=6, severity=Severity.CRITICAL,
        category=Category.SECURITY, title="Replace eval with ast.literal_eval",
        comment="literal_eval only accepts literals.\n\nAll 2 debaters agreed.",
        existing_code='    return eval(data["code"])', confidence=0.9,
        sources=["debate:security", "debate:perf-bot"],
    )  # fmt: skip
    return Review(
        task_id="t1", scope="branch", scope_label="branch feature vs main", repo="/r",
        findings=[finding], coverage=Coverage(models=["openai/gpt-4o"], tokens=12444),
        debate=record,
    )  # fmt: skip


def _sections(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if line.startswith(("# ", "## ", "### "))]


def test_markdown_orders_summary_findings_then_the_debate() -> None:
    markdown = render(_review(), "markdown")
    assert _sections(markdown) == [
        "# Redline debate: branch feature vs main",
        "## Neutral summary",
        "### Overview",
        "### Action items",
        "## Critical (1)",
        "### `app.py:6` — Replace eval with ast.literal_eval",
        "## Debate",
        "### Participants",
        "### Transcript",
        "### Final positions (anonymous)",
        "### How it ended",
        "## Coverage",
    ]
    assert "All 2 debaters agreed." in markdown
    assert "from debate:security, debate:perf-bot" in markdown


def test_participants_table() -> None:
    markdown = render(_review(), "markdown")
    # A joiner after the `$`: GitLab would read `$0` as a snippet reference.
    assert "| Security | `openai/gpt-4o` | 3 | 12,345 | $\u200d0.0123 | — |" in markdown
    # The label differs from the name: both shown; a "|" in a model cannot split the row.
    assert (
        "| Speed (`perf-bot`) | `ollama/llama\\|3` | 1 | 99 | unpriced "
        "| its model failed: HTTP 500 |" in markdown
    )


def test_transcript_quotes_and_sanitizes_every_turn() -> None:
    markdown = render(_review(), "markdown")
    transcript = markdown.split("### Transcript", 1)[1].split("### Final positions", 1)[0]
    assert "#### Round 1 · Security\n\n> # Not a heading\n> The eval is dangerous." in transcript
    assert "<img" not in transcript  # raw HTML from a model never reaches the reader
    assert "#### Round 1 · Speed — skipped\n\n*its model failed*" in transcript
    assert "#### Round 1 · the user interjects\n\n> What about the loop?" in transcript
    assert "#### Round 2 · Security — cut short (stopped by the user)" in transcript
    assert "command:evil" not in transcript and "> The loop is fine, but click" in transcript


def test_positions_and_how_it_ended() -> None:
    markdown = render(_review(), "markdown")
    assert "#### Debater A\n\n> I hold that eval must go." in markdown
    assert "#### Debater B\n\n> I concede the loop." in markdown
    assert "- Rounds: 2 of 3 rounds · stopped: stopped by the user" in markdown
    assert "- Summarizer: `openai/judge`" in markdown
    assert "- Note: turns of round 1 were compacted for Speed" in markdown


def test_a_failed_summary_says_so() -> None:
    listing = "### Debater A\n\n> I hold that eval must go."
    markdown = render(
        _review(summary_markdown=listing, summarizer_error="the summarizer failed: HTTP 500"),
        "markdown",
    )
    assert "## Neutral summary (not available: the final positions are listed instead)" in (
        markdown
    )
    assert "- Summary failed: the summarizer failed: HTTP 500" in markdown


def test_an_empty_debate_still_reads() -> None:
    markdown = render(
        _review(participants=[], turns=[], positions=[], summary_markdown="", stop_reason="x"),
        "markdown",
    )
    assert "## Neutral summary" not in markdown
    assert "No debaters took part." in markdown and "No turns were taken." in markdown
    assert "No debater stated a final position." in markdown
    assert "stopped: x" in markdown


def test_a_review_without_a_debate_is_unchanged() -> None:
    review = _review().model_copy(update={"debate": None})
    markdown = render(review, "markdown")
    assert markdown.startswith("# Redline review: ")
    assert "## Debate" not in markdown and "Neutral summary" not in markdown


def test_json_carries_the_debate_and_the_simple_export_does_not() -> None:
    review = _review()
    data = json.loads(render(review, "json"))
    assert data["debate"]["turns"][3]["kind"] == "stopped"
    assert data["debate"]["positions"][0] == {
        "label": "Debater A",
        "text": "I hold that eval must go.",
    }
    assert Review.model_validate(data).debate == review.debate
    simple = json.loads(render(review, "json-simple"))
    assert [set(item) for item in simple] == [
        {"relevantFile", "existingCode", "suggestionContent", "improvedCode", "label",
         "suggestionLine", "severity"}
    ]  # fmt: skip
