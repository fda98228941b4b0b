"""The comments Redline posts, over generated reviews (tests/review_strategies.py): the summary
comment and every inline comment, on GitHub and GitLab, must not raise and must show every
finding.

- The summary names each finding in its table, unless GitHub's size limit cut rows — then it
  says how many it left out, and that number is exactly the findings it does not name. It
  stays under the limit.
- With `--inline`, each finding is on a line of the diff (its own comment) or in the summary.
- Each inline comment names its finding (title, severity) and carries its hidden marker.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redline.model import Review
from redline.publish.bodies import MAX_BODY, inline_body, summary_body
from redline.publish.markers import finding_marker
from redline.publish.placement import InlineComment, Placement
from review_strategies import long_parts, many_findings, marker, reviews

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_LEFT_OUT = re.compile(r"(\d+) more finding")


def _placement(review: Review) -> Placement:
    """Every anchored finding on a line of the diff (a suggestion when its fix applies), the
    unanchored ones in the summary."""
    out = Placement()
    for finding in review.findings:
        if finding.line is None:
            out.outside.append(finding)
            continue
        last = max(finding.end_line or finding.line, finding.line)
        suggestion = finding.fix_applicable
        out.inline.append(
            InlineComment(
                finding, finding.file, finding.line, last if suggestion else finding.line,
                suggestion,
            )
        )  # fmt: skip
    return out


def check_summary(review: Review, placement: Placement | None, limit: int = MAX_BODY) -> str:
    body = summary_body(review, "review", placement, limit=limit)
    assert len(body) <= limit or not review.findings
    missing = [i for i in range(len(review.findings)) if marker(i) not in body]
    if missing:
        said = [int(n) for n in _LEFT_OUT.findall(body)]
        assert said == [len(missing)], (said, len(missing))
    return body


def check_inline(placement: Placement) -> None:
    for comment in placement.inline:
        index = int(comment.finding.title[3:7])
        for forge in ("github", "gitlab"):
            body = inline_body(comment, forge)  # type: ignore[arg-type]
            assert marker(index) in body
            assert comment.finding.severity.value in body
            assert body.rstrip().endswith(finding_marker(comment.finding.id))


@SETTINGS
@given(review=reviews(), inline=st.booleans())
def test_every_finding_is_in_a_posted_comment(review: Review, inline: bool) -> None:
    placement = _placement(review) if inline else None
    body = check_summary(review, placement)
    if placement is not None:
        check_inline(placement)
        # What was not posted inline is in the summary's details.
        for i, finding in enumerate(review.findings):
            if finding.line is None:
                assert body.count(marker(i)) >= 1


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(review=reviews(), limit=st.integers(2_000, 12_000))
def test_a_summary_cut_for_length_counts_what_it_left_out(review: Review, limit: int) -> None:
    check_summary(review, None, limit)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), inline=st.booleans())
def test_long_model_prose_never_makes_a_comment_too_long(data: st.DataObject, inline: bool) -> None:
    """A summary, note, skipped reason, title or comment longer than a comment may be: the
    summary still fits (GitHub refuses a longer one: nothing would be posted) and still names
    or counts every finding."""
    review = data.draw(long_parts(data.draw(reviews())))
    check_summary(review, _placement(review) if inline else None)


def test_thousands_of_findings_fit_one_comment() -> None:
    review = many_findings(2000)
    check_summary(review, None)
    placement = _placement(review)
    check_summary(review, placement)
    check_inline(placement)
