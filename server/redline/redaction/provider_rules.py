"""The fast patterns: provider key formats and private-key blocks.

detect-secrets (plugins.py) is the maintained list; these rules cover what it misses or
under-reports (Stripe keys longer than its 24 characters, Slack webhooks' full path, a bare
40-character AWS secret, PuTTY `.ppk` private lines, kubeconfig keys, `npm_` tokens of any
length, Mailgun, Shopify and age keys, ...) and
the multi-line key blocks, which its line scanner cannot see whole. Every pattern here starts
with a literal (see rule.py).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final

from redline.redaction.code_filter import entropy, looks_random
from redline.redaction.rule import CONTEXT, Rule
from redline.redaction.spans import line_of

# -- key blocks --------------------------------------------------------------------------------

# Lines after a key header that are still key material: base64, or `Header: value` lines
# (Proc-Type, DEK-Info, Comment, Encryption, Public-Lines, ...), under any diff/line-number
# prefix or string quoting.
_MATERIAL: Final = re.compile(
    r"""[\s\d+|\-#/*>;,'"]*(?:[A-Za-z0-9+/=]{8,}|[A-Z][A-Za-z0-9-]*:[^\n]*|\\n)[\s'",+\\n]*"""
)
_MAX_BLOCK: Final = 65_536
MARKER: Final = re.compile(
    r"-{4,5} ?BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{4,5}|Private-Lines:[ \t]*\d+"
)


def material_end(text: str, start: int) -> int:
    """End of the key material that follows a key header ending at `start` (no END line)."""
    end = text.find("\n", start)
    end = len(text) if end < 0 else end  # the rest of the header's line (`\n` escapes)
    limit = min(len(text), start + _MAX_BLOCK)
    while end < limit:
        nxt = text.find("\n", end + 1)
        nxt = len(text) if nxt < 0 else nxt
        if not _MATERIAL.fullmatch(text, end + 1, nxt):
            break
        end = nxt
    return end


def _b64_private_key(m: re.Match[str]) -> bool:
    head = m.group()[:96]
    try:
        return b"PRIVATE KEY" in base64.b64decode(head[: len(head) // 4 * 4])
    except (binascii.Error, ValueError):
        return False


def _aws_secret(m: re.Match[str]) -> bool:
    text, start, end = m.string, m.start(), m.end()
    value = m.group()
    if (start and text[start - 1] in "._-:@\\") or (end < len(text) and text[end] in "._-@\\"):
        return False  # part of a URL, path or identifier
    return value.count("/") <= 3 and looks_random(value, min_entropy=4.2)


def _npm_token(m: re.Match[str]) -> bool:
    return looks_random(m.group("v"), min_entropy=3.5)


def _azure_devops_pat(m: re.Match[str]) -> bool:
    """Random base32 (entropy ≈ 4.6 over 52 characters, not a run of words and digits), on a
    line that names Azure DevOps (the gate lets `path` and `upload` through too)."""
    value = m.group()
    return (
        any(c.isdigit() for c in value)
        and entropy(value) >= 4.2
        and _AZURE_DEVOPS_WORDS.search(line_of(m.string, m.start(), m.end()).lower()) is not None
    )


_BECH32: Final = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
# The words that put a prefix-less Azure DevOps token in context: `$pat`, `AZURE_DEVOPS_PAT`,
# `ado_token`, `dev.azure.com`, `visualstudio.com`, `personal access token`; the newer token
# carries `AZDO` itself. The gate is their cheap necessary condition (one plain search of the
# lower-cased text), the check the words themselves.
_AZURE_DEVOPS: Final = re.compile(r"pat|ado|azure|devops|vsts|visualstudio|personal.?access|azdo")
_AZURE_DEVOPS_WORDS: Final = re.compile(
    r"(?<![a-z])(?:pat|ado)(?![a-z])|azure|devops|vsts|visualstudio|personal.?access"
)
_P = re.compile


def _prefixed(kind: str, prefixes: tuple[str, ...], body: str, **kw: object) -> list[Rule]:
    """One rule per literal prefix (an alternation would lose the literal-prefix search)."""
    return [Rule(kind, _P(re.escape(p) + body), boundary=True, **kw) for p in prefixes]  # type: ignore[arg-type]


def provider_rules() -> tuple[Rule, ...]:
    """The provider and key-block rules, compiled on each call (detection.py caches them)."""
    return (
        # Private keys: the whole block between the BEGIN and END lines (those stay readable).
        Rule(
            "private-key",
            _P(
                r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?P<v>.{1,65536}?)"
                r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----",
                re.DOTALL,
            ),
            group="v",
            name="pem-private-key",
        ),
        Rule(
            "private-key",
            _P(
                r"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----(?P<v>.{1,65536}?)"
                r"---- END SSH2 ENCRYPTED PRIVATE KEY ----",
                re.DOTALL,
            ),
            group="v",
            name="ssh2-private-key",
        ),
        # PuTTY .ppk: the private lines and their MAC (the public lines are public).
        Rule(
            "putty-private-key",
            _P(
                r"Private-Lines:[ \t]*\d+[ \t]*\r?\n"
                r"(?P<v>.{1,65536}?Private-MAC:[ \t]*[0-9a-fA-F]+)",
                re.DOTALL,
            ),
            group="v",
        ),
        # A PEM private key, base64-encoded again (kubeconfig, Kubernetes secrets, CI variables).
        Rule(
            "private-key",
            _P(r"LS0tLS1CRUdJTi[A-Za-z0-9+/=]{20,}"),
            check=_b64_private_key,
            name="base64-private-key",
        ),
        *_prefixed(
            "aws-access-key-id",
            ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
            r"[A-Z0-9]{16,17}(?![A-Z0-9])",
        ),
        *_prefixed(
            "stripe-key", ("sk_live_", "sk_test_", "rk_live_", "rk_test_"), r"[0-9a-zA-Z]{10,}"
        ),
        *_prefixed("stripe-webhook-secret", ("whsec_",), r"[A-Za-z0-9+/=]{20,}"),
        Rule(
            "slack-webhook",
            _P(r"hooks\.slack\.com/(?P<v>(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{10,})"),
            group="v",
        ),
        *_prefixed(
            "slack-token",
            ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-"),
            r"[A-Za-z0-9\-]{10,}",
        ),
        *_prefixed("slack-token", ("xapp-",), r"\d-[A-Za-z0-9\-]{10,}"),
        Rule("discord-webhook", _P(r"/api/webhooks/(?P<v>\d{5,}/[A-Za-z0-9_\-]{20,})"), group="v"),
        *_prefixed("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"[A-Za-z0-9]{30,}"),
        *_prefixed("github-token", ("github_pat_",), r"[A-Za-z0-9_]{30,}"),
        *_prefixed(
            "gitlab-token",
            (
                "glpat-",
                "gldt-",
                "glft-",
                "glsoat-",
                "glrt-",
                "glcbt-",
                "glimt-",
                "glptt-",
                "glagent-",
                "gloas-",
            ),
            r"[A-Za-z0-9_\-]{20,}",
        ),
        # npm tokens are 36 characters today; a shorter or longer one is a token too, while
        # npm's own variables (`npm_package_version`, `npm_config_registry`) are words.
        *_prefixed(
            "npm-token", ("npm_",), r"(?P<v>[A-Za-z0-9]{16,})(?![A-Za-z0-9_])", check=_npm_token
        ),
        # Mailgun's private API key (`pubkey-…` is the public one: the boundary leaves it).
        *_prefixed("mailgun-key", ("key-",), r"[0-9a-f]{32}(?![0-9A-Za-z])"),
        # Shopify: admin API access tokens, shared secrets, custom-app and private-app tokens.
        *_prefixed(
            "shopify-token",
            ("shpat_", "shpss_", "shpca_", "shppa_"),
            r"[0-9a-fA-F]{32}(?![0-9A-Za-z])",
        ),
        # age's secret key: Bech32 (upper case) after its fixed human-readable part.
        *_prefixed("age-secret-key", ("AGE-SECRET-KEY-1",), rf"[{_BECH32}]{{58}}(?![0-9A-Za-z])"),
        *_prefixed("pypi-token", ("pypi-",), r"[A-Za-z0-9_\-]{50,}"),
        *_prefixed("anthropic-key", ("sk-ant-",), r"[A-Za-z0-9_\-]{20,}"),
        *_prefixed("openai-key", ("sk-",), r"[A-Za-z0-9_\-]{20,}"),  # OpenAI, OpenRouter, DeepSeek
        *_prefixed("google-api-key", ("AIza",), r"[0-9A-Za-z_\-]{35}"),
        *_prefixed("google-oauth-secret", ("GOCSPX-",), r"[A-Za-z0-9_\-]{20,}"),
        *_prefixed("huggingface-token", ("hf_",), r"[A-Za-z0-9]{30,}"),
        *_prefixed("square-token", ("sq0atp-", "sq0csp-"), r"[0-9A-Za-z_\-]{22,}"),
        *_prefixed("sendgrid-key", ("SG.",), r"[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
        *_prefixed("jwt", ("eyJ",), r"[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"),
        Rule(
            "azure-storage-key",
            _P(r"AccountKey=(?P<v>[A-Za-z0-9+/=]{20,})"),
            group="v",
            name="azure-account-key",
        ),
        Rule(
            "azure-storage-key",
            _P(r"SharedAccessKey=(?P<v>[A-Za-z0-9+/=]{20,})"),
            group="v",
            name="azure-shared-access-key",
        ),
        Rule("azure-sas-signature", _P(r"sig=(?P<v>[A-Za-z0-9%+/=]{20,})"), group="v"),
        # Azure DevOps personal access tokens have no prefix: 52 characters of base32 (the
        # older kind) or 84 with `AZDO` at 76 (the newer), on a line that names them.
        Rule(
            "azure-devops-pat",
            _P(r"(?<![A-Za-z0-9])[a-z2-7]{52}(?![A-Za-z0-9])"),
            gate=_AZURE_DEVOPS,
            check=_azure_devops_pat,
        ),
        Rule(
            "azure-devops-pat",
            _P(r"(?<![A-Za-z0-9])[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}(?![A-Za-z0-9])"),
            gate=_AZURE_DEVOPS,
            name="azure-devops-pat-84",
        ),
        # A bare AWS secret access key: 40 base64 characters that look random.
        Rule(
            "aws-secret-key",
            _P(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
            rank=CONTEXT,
            check=_aws_secret,
        ),
    )
