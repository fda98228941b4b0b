"""The one choke point (redline.redaction): every module-level function goes to the one shared
redactor with what it was given. Each test states one rule a mutant of __init__.py broke. Run by
`make mutation` for redaction/__init__.py (scripts/mutation.toml).
"""

from __future__ import annotations

import pytest

import redline.redaction.redactor as redactor_module
from guard_redaction import GHP, KEY, RANDOM20
from redline.redaction import (
    Redactor,
    get_redactor,
    redact,
    redact_data,
    redact_many,
    redact_messages,
    register_secret,
)


@pytest.fixture(autouse=True)
def shared(monkeypatch: pytest.MonkeyPatch) -> Redactor:
    """A fresh shared redactor for each test (known secrets do not leak between tests)."""
    r = Redactor(key=KEY, environment=False)
    monkeypatch.setattr(redactor_module, "_default", r)
    return r


def p(r: Redactor, value: str = GHP, kind: str = "github-token") -> str:
    return r.placeholder(value, kind)


def test_redact_masks_a_text_with_the_shared_redactor(shared: Redactor) -> None:
    assert get_redactor() is shared
    assert redact(f"t {GHP}") == f"t {p(shared)}"
    assert redact("") == ""


def test_redact_many_masks_each_text(shared: Redactor) -> None:
    assert redact_many([f"t {GHP}", "plain", ""]) == [f"t {p(shared)}", "plain", ""]


def test_redact_data_masks_every_string(shared: Redactor) -> None:
    assert redact_data({"k": [f"t {GHP}", 1]}) == {"k": [f"t {p(shared)}", 1]}


def test_redact_messages_masks_every_message(shared: Redactor) -> None:
    out = redact_messages([{"role": "user", "content": f"t {GHP}"}])
    assert out == [{"role": "user", "content": f"t {p(shared)}"}]


def test_a_registered_secret_is_masked_everywhere_under_its_kind(shared: Redactor) -> None:
    register_secret("cfg-" + RANDOM20, "api-key")
    register_secret("own-" + RANDOM20)
    assert redact(f"a cfg-{RANDOM20} b own-{RANDOM20}") == (
        f"a {p(shared, 'cfg-' + RANDOM20, 'api-key')} b {p(shared, 'own-' + RANDOM20, 'secret')}"
    )
