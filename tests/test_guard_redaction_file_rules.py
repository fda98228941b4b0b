"""Secrets found by the format of their file (redline.redaction.file_rules), rule by rule:
what a literal is, the XML element's own name, a value read quoted, netrc entries standing on
their own, and a config line's value: code or a key, a password or not, by its length, kinds
of character and entropy.

Each test states one rule a mutant of file_rules.py broke, on the rule itself
(`rule_spans`: what it finds, its check applied). Run by `make mutation` for file_rules.py
(scripts/mutation.toml).
"""

from __future__ import annotations

import pytest

from redline.redaction.detection import rule_spans
from redline.redaction.file_rules import _literal, file_rules


def found(label: str, text: str) -> list[str]:
    """What the rule named `label` alone finds in `text` (its check applied)."""
    (rule,) = [r for r in file_rules() if r.label == label]
    return [text[s.start : s.end] for s in rule_spans(rule, text)]


def config(line: str) -> bool:
    value = line.split("=", 1)[1].strip()
    return found("config-value", line + "\n") == [value]


@pytest.mark.parametrize("prefix", ["$", "{", "%", "/", "./", "../", "~/"])
def test_a_reference_template_or_path_is_no_literal(prefix: str) -> None:
    assert _literal("hunter2x")
    assert not _literal(prefix + "hunter2x")


def test_an_xml_element_is_named_by_its_local_name() -> None:
    # `<pwd:value>`: the element is `value` (in namespace pwd), no secret's name.
    assert found("xml-element", "<pwd:value>Zq8sK2vN4w</pwd:value>") == []
    assert found("xml-element", "<ns:password>Zq8sK2vN4w</ns:password>") == ["Zq8sK2vN4w"]
    assert found("xml-setting", '<add key="app:pwd:value" value="hunter2-fake"/>') == []


def test_an_xml_value_is_read_as_a_quoted_one() -> None:
    # A plain word in a password element is a password (it would be a name in code).
    assert found("xml-element", "<password>hunter</password>") == ["hunter"]


@pytest.mark.parametrize("head", ["machine h", "default"])
def test_a_netrc_entry_starts_a_word(head: str) -> None:
    line = f"{head} login u password hunter2-fake\n"
    label = "netrc-machine" if head != "default" else "netrc-default"
    assert found(label, line) == ["hunter2-fake"]
    assert found(label, "x" + line) == []


def test_a_config_value_with_a_trailing_x_is_read_whole() -> None:
    assert config("SECRET_KEY = 9w(ub)@k0pLX")  # twelve characters, the last an X


def test_a_config_value_that_is_no_literal_is_not_a_secret_even_untemplated() -> None:
    assert not config("SECRET_KEY = $9(Xy2#pLq0w")


def test_only_a_trailing_bang_or_question_mark_is_dropped_to_read_a_name() -> None:
    assert config("PASSWORD = self.secret!X")


def test_a_password_names_its_last_two_words() -> None:
    # `password_token_2`: a token (its last words), so a key's bar applies, which this fails.
    assert not config("password_token_2 = 2hunter(fake")


def test_a_config_password_has_eight_characters_of_two_kinds() -> None:
    assert config("DB_PASSWORD = h(unterx")
    assert not config("DB_PASSWORD = h(unter")  # seven
    assert not config("DB_PASSWORD = ((((((((")  # one kind


def test_a_config_key_has_twelve_characters_of_three_kinds_and_3_5_bits() -> None:
    assert config("SECRET_KEY = 9(aB3dE5fG7h")  # twelve, four kinds, 3.58 bits
    assert config("SECRET_KEY = A(9zA(9zcdefghij")  # exactly 3.5 bits
    assert not config("SECRET_KEY = (abcdefghijk")  # two kinds only
