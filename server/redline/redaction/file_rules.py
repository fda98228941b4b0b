"""Secrets found by the format of the file they stand in: XML elements and settings pairs,
netrc lines, a libpq connection string's `password=`, a GCP service account's
`private_key_id`, and config lines whose value runs to the end of the line (`SECRET_KEY=w0ub)@…`
in a `.conf`, which the keyword rule reads as code: a value holding `(` or `$`).

Each check asks code_filter.py whether the value is a literal secret or ordinary code, as the
keyword rule does (context_rules.py).
"""

from __future__ import annotations

import re
from typing import Final

from redline.redaction.code_filter import (
    DOTTED,
    IDENT,
    TEMPLATED,
    entropy,
    example_value,
    name_words,
    plausible,
    secret_name,
)
from redline.redaction.context_rules import keyword_kind
from redline.redaction.rule import CONTEXT, KEYWORD, Rule
from redline.redaction.spans import line_of

_PASSWORD_WORDS: Final = frozenset(("password", "passwd", "pwd", "pass", "passphrase"))


def _line(m: re.Match[str]) -> str:
    return line_of(m.string, m.start(), m.end())


def _literal(value: str) -> bool:
    """Not an example, a template, a reference or a path (`${DB_PASSWORD}`, `%(pw)s`,
    `<password>`, `/path/to/private/key`)."""
    return not (example_value(value) or value.startswith(("$", "{", "%", "/", "./", "../", "~/")))


# -- XML -----------------------------------------------------------------------------------------


def _element_name(m: re.Match[str]) -> str:
    return m.group("name").rsplit(":", 1)[-1]  # a namespace prefix is not part of the name


def _xml_secret(m: re.Match[str]) -> bool:
    """`<password>hunter2</password>`, `<apiToken>…</apiToken>`, `<add key="SmtpPassword"
    value="…"/>`: a secret-named element or setting with a literal value (not `<tokenType>`,
    `<password>${DB_PASSWORD}</password>`)."""
    name, value = _element_name(m), m.group("v").strip()
    return (
        secret_name(name)
        and _literal(value)
        and plausible(value, quoted=True, line=_line(m), name=name)
    )


def _xml_kind(m: re.Match[str]) -> str:
    return keyword_kind(_element_name(m))


# -- netrc ---------------------------------------------------------------------------------------

# Between two netrc tokens: blanks, or a line break and whatever a diff or a numbered listing
# puts before the next line (`+`, `  42 +| `, `  12| `).
_GAP: Final = r"(?:[ \t]*\r?\n[ \t\d+|\-]*|[ \t]+)"
_NETRC_FIELDS: Final = rf"(?:{_GAP}(?:login|account|port|protocol)[ \t]+\S+){{0,4}}"


def _netrc(m: re.Match[str]) -> bool:
    """A netrc entry names its login (`machine h login u password p`, on one line or several):
    prose that mentions a machine and a password does not."""
    fields = (m.group("before") or "") + (m.group("after") or "")
    value = m.group("v")
    # A backtick: prose quoting a netrc line as code (`machine h login u password p`).
    return (
        re.search(r"(?<!\S)login[ \t]", fields) is not None
        and _literal(value)
        and ("`" not in value)
    )


# -- libpq -----------------------------------------------------------------------------------------

# Another `keyword=value` pair of a libpq connection string, separated by blanks: not a
# keyword argument (`connect(user='app', password=pw)`), whose pairs end in a comma.
_LIBPQ_PAIR: Final = re.compile(
    r"(?<![\w.])(?:host|hostaddr|dbname|user|port|sslmode|connect_timeout|application_name)="
    r"(?:'[^'\n]*'|[^\s,;'\"()\[\]{}]+)(?=\s|[\"']|$)"
)


def _libpq(m: re.Match[str]) -> bool:
    """`password=…` among libpq's other pairs (`host=db password=p dbname=app`): a literal
    whatever it looks like, even a plain word; not a dotted name (`password=self.pw`)."""
    value = m.group("sq") if m.group("sq") is not None else m.group("bare")
    return (
        _LIBPQ_PAIR.search(_line(m)) is not None and _literal(value) and not DOTTED.fullmatch(value)
    )


# -- config lines --------------------------------------------------------------------------------

# A call, whole or opened on this line (`get_key()`, `Prompt.ask(`, `Value(creds.key,`): a
# name of three characters or more, then `(`. A key may hold `(` too, but seldom after a
# first run of three letters or digits (about one Django key in thirty).
_CALL: Final = re.compile(r"[A-Za-z_$][\w.$:\->]{2,}\(")
_SYMBOL: Final = re.compile(r"[^A-Za-z0-9]")


def _config_value(m: re.Match[str]) -> bool:
    """`NAME = value` alone on its line, NAME secret, value neither code nor a template.

    The keyword rule reads a value holding `(`, `$`, `!` or `~` as code; a config file's (or
    a `.env`'s, a YAML file's) value is whatever runs to the end of the line. Code that fits
    the shape — `SECRET_KEY = get_key()`, `token: this.token,`, `password: pw!` — is an
    identifier, a dotted name or a call; a key holds three kinds of character (lower, upper,
    digit, symbol) and looks random, a password two."""
    name = m.group("name")
    value = m.group("v").rstrip(",;")
    if not secret_name(name) or not _literal(value) or TEMPLATED.match(value):
        return False
    core = value.rstrip("!?")
    if IDENT.fullmatch(core) or DOTTED.fullmatch(core) or _CALL.match(value):
        return False
    kinds = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            _SYMBOL.search(value) is not None,
        )
    )
    if any(w in _PASSWORD_WORDS for w in name_words(name)[-2:]):
        return len(value) >= 8 and kinds >= 2
    return len(value) >= 12 and kinds >= 3 and entropy(value) >= 3.5


def _config_kind(m: re.Match[str]) -> str:
    return keyword_kind(m.group("name"))


_P = re.compile


def file_rules() -> tuple[Rule, ...]:
    """The file-format rules, compiled on each call (detection.py caches them)."""
    return (
        # netrc: ungated, as the `machine` line may be above the `password` line.
        *(
            Rule(
                "password",
                _P(
                    head + rf"(?P<before>{_NETRC_FIELDS}){_GAP}password[ \t]+(?P<v>\S+)"
                    rf"(?P<after>{_NETRC_FIELDS})"
                ),
                group="v",
                rank=CONTEXT,
                boundary=True,
                check=_netrc,
                name=f"netrc-{head.split('[')[0]}",
            )
            for head in (r"machine[ \t]+\S+", r"default")
        ),
        # -- gated: on lines with a secret-sounding word only ---------------------------------
        Rule(
            _xml_kind,
            _P(
                r"<(?P<name>[A-Za-z_][\w.\-]{0,63}(?::[A-Za-z_][\w.\-]{0,63})?)"
                r"(?:[ \t][^<>\n]{0,256})?>(?P<v>[^<>\n]{1,512})</(?P=name)[ \t]*>"
            ),
            group="v",
            rank=KEYWORD,
            gated=True,
            check=_xml_secret,
            name="xml-element",
        ),
        Rule(
            _xml_kind,
            _P(
                r"""(?:key|name)[ \t]*=[ \t]*(?P<q>["'])(?P<name>[^"'\n]{1,128})(?P=q)[ \t]+"""
                r"""value[ \t]*=[ \t]*(?P<q2>["'])(?P<v>[^"'\n]{1,512})(?P=q2)"""
            ),
            group="v",
            rank=KEYWORD,
            gated=True,
            check=_xml_secret,
            name="xml-setting",
        ),
        Rule(
            "password",
            _P(
                r"(?<![\w.])password[ \t]*=[ \t]*"
                r"(?:'(?P<sq>[^'\\\n]{1,256})'|(?P<bare>[^\s'\"\\,;()\[\]{}]{1,256}))"
                r"(?=\s|[\"']|$)"
            ),
            group="dqv",
            rank=CONTEXT,
            gated=True,
            check=_libpq,
            name="libpq-password",
        ),
        Rule(
            "gcp-private-key-id",
            _P(r"""private_key_id["']?[ \t]*[:=][ \t]*["']?(?P<v>[0-9a-f]{40})(?![0-9A-Za-z])"""),
            group="v",
            rank=CONTEXT,
            gated=True,
        ),
        Rule(
            _config_kind,
            _P(
                r"(?m)^(?:[^\s:]{1,256}:\d+:)?[ \t\d+|\-]*(?:export[ \t]+)?"
                r"(?P<name>[A-Za-z_][\w.\-]{0,64})[\"']?[ \t]*[=:][ \t]*"
                r"(?P<v>[^\s'\"`\[\]{}<>]{1,512})[ \t\r]*$"
            ),
            group="v",
            rank=KEYWORD,
            gated=True,
            check=_config_value,
            name="config-value",
        ),
    )
