"""What both forges' posting shares: the options, the outcome, reading pages, the error."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from redline.config_models import DEFAULT_MAX_WRITES
from redline.errors import RedlineError
from redline.model import Finding
from redline.publish.transport import ApiCall, ApiResponse, Transport

_PAGE: Final = 100
_MAX_PAGES: Final = 30  # 3,000 comments: past that, a pull request has other problems


class PostError(RedlineError):
    """Posting failed: the report is written, but nothing (or not everything) was posted."""


@dataclass(frozen=True)
class PostOptions:
    inline: bool = False
    dry_run: bool = False
    max_writes: int = DEFAULT_MAX_WRITES  # publish.max_writes: API writes per run, at most


@dataclass
class PostOutcome:
    """What was done, for the lines the CLI prints."""

    summary: str = ""  # "created" | "updated"
    summary_url: str = ""
    inline: list[Finding] = field(default_factory=list)  # posted as comments now
    moved: list[Finding] = field(default_factory=list)  # refused inline: in the summary
    outside: list[Finding] = field(default_factory=list)  # not in the diff: in the summary
    already: list[Finding] = field(default_factory=list)  # an earlier run posted them
    capped: list[Finding] = field(default_factory=list)  # the write cap stopped them: summary
    cap: int = 0
    notes: list[str] = field(default_factory=list)

    def lines(self, where: str, dry_run: bool) -> list[str]:
        verb = "would post" if dry_run else "posted"
        done = "would be " if dry_run else ""
        out = [f"{verb} the summary comment on {where} ({done}{self.summary})"]
        if self.summary_url:
            out[0] += f": {self.summary_url}"
        if self.inline or self.already or self.outside or self.moved or self.capped:
            count = len(self.inline)
            sent = " would be sent" if dry_run else ""
            parts = [f"{count} inline comment{'s' if count != 1 else ''}{sent}"]
            if self.already:
                parts.append(f"{len(self.already)} already posted by an earlier run")
            if self.outside:
                parts.append(f"{len(self.outside)} not on a line of the diff (in the summary)")
            if self.moved:
                parts.append(f"{len(self.moved)} refused by the forge (in the summary)")
            if self.capped:
                parts.append(
                    f"{len(self.capped)} not posted inline: write cap of {self.cap} reached "
                    "(in the summary)"
                )
            out.append(", ".join(parts))
        return out + self.notes


def read_error_handler(outcome: PostOutcome, options: PostOptions) -> Callable[[str], None]:
    """What to do when existing comments cannot be read: a real post stops (without them it
    could duplicate its summary or findings); a dry run notes it and shows the writes as if
    nothing had been posted before."""

    def fail(message: str) -> None:
        if not options.dry_run:
            raise PostError(message)
        outcome.notes.append(f"{message} — shown as if nothing had been posted before")

    return fail


def post_summary(
    transport: Transport,
    outcome: PostOutcome,
    body: str,
    *,
    update: ApiCall | None,
    create: ApiCall,
    url_key: str,
) -> None:
    """Edit the earlier run's summary (`update`, when one was found) or create it; the
    outcome says which, with the comment's address (`url_key` of the forge's answer)."""
    call = update or create
    what = "updating the summary" if update else "posting the summary"
    response = checked(transport.send(ApiCall(call.method, call.endpoint, {"body": body})), what)
    outcome.summary = "updated" if update else "created"
    if isinstance(response.data, dict) and isinstance(response.data.get(url_key), str):
        outcome.summary_url = response.data[url_key]


def check_same_head(reviewed: str | None, current: str | None, where: str) -> None:
    """The request's head (read from the pinned API) is the commit that was reviewed.

    Otherwise the findings' lines belong to other code: the request was pushed after the
    review, or the forge CLI resolved the number in another repository (gh and glab pick a
    default remote of their own, which may not be origin). Posting then would put comments
    on the wrong lines, or on the wrong request."""
    if reviewed and current and reviewed.lower() != current.lower():
        raise PostError(
            f"{where}'s head is {current[:12]}, but the review was of {reviewed[:12]}: "
            "not posting findings whose lines belong to other code — review again, then post"
        )


def checked(response: ApiResponse, what: str) -> ApiResponse:
    if not response.ok:
        raise PostError(f"{what} failed: {response.error or f'HTTP {response.status}'}")
    return response


def pages(
    transport: Transport, endpoint: str, what: str, on_error: Callable[[str], None]
) -> Iterator[dict[str, Any]]:
    """Every item of a paginated list (`per_page`/`page` work on GitHub and GitLab alike).
    A list that cannot be read is reported through `on_error` and yields nothing more."""
    for page in range(1, _MAX_PAGES + 1):
        sep = "&" if "?" in endpoint else "?"
        response = transport.send(ApiCall("GET", f"{endpoint}{sep}per_page={_PAGE}&page={page}"))
        if not response.ok:
            on_error(f"could not read {what}: {response.error or f'HTTP {response.status}'}")
            return
        items = response.data if isinstance(response.data, list) else []
        yield from (item for item in items if isinstance(item, dict))
        if len(items) < _PAGE:
            return
