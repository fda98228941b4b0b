"""The redactor (redline.redaction) on its own: every kind of the corpus is masked, placeholders
are consistent and keyed, ordinary code is left alone, detect-secrets is wired in code (no
baseline, no network), log records are redacted, and nothing backtracks for seconds."""

from __future__ import annotations

import hashlib
import io
import json
import logging
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from redline.redaction import PLACEHOLDER, Redactor, get_redactor, redact, redact_messages
from redline.redaction.logfilter import RedactingFilter, configure_cli_logging
from redline.redaction.placeholder import KEY_FILE
from redline.redaction.plugins import DetectSecrets
from redline.redaction.provider_rules import MARKER

from secret_corpus import CORPUS, KINDS, ORDINARY, Secret, fragments_in, rand, random_key

KEY = b"k" * 32


@pytest.fixture
def redactor() -> Redactor:
    return Redactor(key=KEY, environment=False)


def test_the_corpus_has_at_least_forty_kinds() -> None:
    assert len(KINDS) >= 40
    for kind in (
        "stripe-live", "slack-webhook", "aws-secret-bare", "yaml-pass", "json-pwd",
        "python-auth-tuple", "kubeconfig-client-key", "putty-ppk", "npm-token",
    ):  # fmt: skip
        assert kind in KINDS  # what an attack run once got through


@pytest.mark.parametrize("secret", CORPUS, ids=lambda s: s.kind)
def test_every_kind_is_masked(redactor: Redactor, secret: Secret) -> None:
    out = redactor.redact(secret.text)
    for needle in secret.needles:
        assert needle not in out, f"{secret.kind}: {needle!r} left in\n{out}"
        # Masked whole: no part of it is left beside its placeholder either.
        assert not fragments_in(needle, out), f"{secret.kind}: part of {needle!r} left\n{out}"
    assert PLACEHOLDER.search(out)


@pytest.mark.parametrize("path", sorted(ORDINARY))
def test_ordinary_code_is_not_masked(redactor: Redactor, path: str) -> None:
    assert redactor.redact(ORDINARY[path]) == ORDINARY[path]


@pytest.mark.parametrize(
    "code",
    [
        "token = get_token()",
        "max_tokens = 100",
        "self.token = token",
        "password: str",
        "def connect(user: str, password: str | None = None) -> None:",
        'secret = os.environ["APP_SECRET"]',
        'password = "${DB_PASSWORD}"',
        'api_key_env = "OPENAI_API_KEY"',
        '"eos_token": "stop",',
        "    token: the token to send with each request",
        "headers = {'x-api-key': self.api_key}",
        '"Authorization": "Bearer " + token,',
        "password_min_length: 12",
        "cache_key = f'user:{user_id}'",
        "https://user:password@host.invalid/path",
    ],
)
def test_code_that_names_secrets_stays_readable(redactor: Redactor, code: str) -> None:
    assert redactor.redact(code) == code


def test_the_same_secret_gets_the_same_placeholder_everywhere(redactor: Redactor) -> None:
    key = "sk_live_" + random_key(40)
    text = f'STRIPE = "{key}"\n# deploy.sh uses {key} too\n'
    out = redactor.redact(text)
    found = PLACEHOLDER.findall(out)
    assert len(found) == 2 and found[0] == found[1]
    assert found[0].startswith("[REDACTED:stripe-key:")
    # In another text, another call: the same placeholder, and kind and digest stay linked.
    assert found[0] in redactor.redact(f"curl -u {key}: https://api.stripe.com")
    other = redactor.redact('STRIPE = "sk_live_' + random_key(40) + '"')
    assert PLACEHOLDER.findall(other)[0] != found[0]


def test_a_secret_found_once_is_masked_where_no_detector_would_see_it(redactor: Redactor) -> None:
    password = "Tr0ub4dor&3-" + random_key(6)
    redactor.redact(f'DB_PASSWORD = "{password}"')
    out = redactor.redact(f"login(user, {password!r})")  # no keyword, no pattern
    assert password not in out and "[REDACTED:password:" in out


def test_redaction_is_idempotent(redactor: Redactor) -> None:
    for secret in CORPUS:
        once = redactor.redact(secret.text)
        assert redactor.redact(once) == once, secret.kind


def test_digests_are_keyed_not_plain_hashes(tmp_path: Path) -> None:
    value = 'password = "hunter2-fake"'
    a = Redactor(key=b"a" * 32, environment=False).redact(value)
    b = Redactor(key=b"b" * 32, environment=False).redact(value)
    assert a != b  # the digest depends on the key
    digest = a.split(":")[-1].rstrip(']"')
    plain = hashlib.sha256(b"hunter2-fake").hexdigest()
    assert not plain.startswith(digest)


def test_the_key_is_kept_privately_so_placeholders_survive_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("REDLINE_CACHE_DIR", str(cache))
    text = 'token = "' + random_key(32) + '"'
    first = Redactor(environment=False).redact(text)
    key_file = cache / KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert Redactor(environment=False).redact(text) == first  # a new process, same key


def test_an_unwritable_cache_falls_back_to_a_per_process_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("REDLINE_CACHE_DIR", str(blocker / "cache"))
    out = Redactor(environment=False).redact('password = "hunter2-fake"')
    assert "hunter2-fake" not in out and "[REDACTED:password:" in out


def test_environment_secrets_and_registered_values_are_masked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    own = "own-" + random_key(20)
    monkeypatch.setenv("FAKE_SERVICE_API_KEY", own)
    r = Redactor(key=KEY)
    assert own not in r.redact(f"error: 401 for key {own}")
    configured = "cfg-" + random_key(20)
    r.register(configured, "api-key")
    assert r.redact(f"x {configured} y") == f"x {r.placeholder(configured, 'api-key')} y"


def test_messages_and_tool_arguments(redactor: Redactor) -> None:
    key = "ghp_" + random_key(36)
    args = json.dumps({"path": "a.py", "note": f'token "{key}" here'})
    messages = [
        {"role": "user", "content": f"key {key}"},
        {"role": "user", "content": [{"type": "text", "text": key}, {"type": "image"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "1", "function": {"name": "read_file", "arguments": args}}],
        },
    ]
    out = redactor.redact_messages(messages)
    assert key not in json.dumps(out)
    assert json.loads(out[2]["tool_calls"][0]["function"]["arguments"])["path"] == "a.py"
    assert key in messages[0]["content"]  # the caller's messages are untouched
    assert redact_messages([]) == []


def test_data_is_redacted_string_by_string(redactor: Redactor) -> None:
    key = "xoxb-123456789012-1234567890123-" + random_key(24)
    data = {"units": [{"path": "a.py", "tags": ["x"]}] * 3, key: {"nested": [f"k={key}", 3]}}
    out = redactor.redact_data(data)
    assert key not in json.dumps(out)
    assert out["units"] == data["units"]
    clean = {"a": ["b", 1, None], "c": {"d": "e"}}
    assert redactor.redact_data(clean) is clean


def test_many_texts_at_once_match_one_at_a_time(redactor: Redactor) -> None:
    texts = [s.text for s in CORPUS] + list(ORDINARY.values()) + ["", "plain"]
    together = redactor.redact_many(texts)
    apart = [redactor.redact(t) for t in texts]
    assert together == apart


# -- detect-secrets, configured in code -----------------------------------------------------------


def test_every_detect_secrets_plugin_is_wired() -> None:
    ds = DetectSecrets()
    names = {p.name for p in ds.regex_plugins}
    for expected in (
        "AWSKeyDetector", "AzureStorageKeyDetector", "BasicAuthDetector", "DiscordBotTokenDetector",
        "GitHubTokenDetector", "GitLabTokenDetector", "JwtTokenDetector", "MailchimpDetector",
        "NpmDetector", "OpenAIDetector", "PypiTokenDetector", "SendGridDetector", "SlackDetector",
        "SquareOAuthDetector", "StripeDetector", "TelegramBotTokenDetector", "TwilioKeyDetector",
        "ArtifactoryDetector", "CloudantDetector", "IbmCloudIamDetector", "IbmCosHmacDetector",
        "SoftlayerDetector",
    ):  # fmt: skip
        assert expected in names
    assert ds.other_plugins == []  # a new kind of plugin in an upgrade must be wired on purpose


def test_every_private_key_header_detect_secrets_knows_is_masked_whole(
    redactor: Redactor,
) -> None:
    ds = DetectSecrets()
    body = [random_key(64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")] * 3
    for pattern in ds.private_key_markers:
        header = pattern.pattern
        if header.startswith("BEGIN"):
            text = f"-----{header}-----\n" + "\n".join(body) + "\n"  # no END line: cut off
            assert MARKER.search(text) or "SSH2" in header
        else:
            text = f"{header}: ssh-rsa\nPrivate-Lines: 3\n" + "\n".join(body) + "\n"
        out = redactor.redact(text)
        assert body[0] not in out, header


def test_no_baseline_settings_or_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `.secrets.baseline` naming a custom plugin in the working directory (the reviewed
    repository, say) is never read, and scanning opens no connection (no verification)."""
    marker = tmp_path / "plugin-was-imported"
    plugin = tmp_path / "evil_plugin.py"
    plugin.write_text(f"open({str(marker)!r}, 'w').close()\n")
    baseline = {
        "version": "1.5.0",
        "plugins_used": [{"name": "Evil", "path": f"file://{plugin}"}],
        "filters_used": [],
        "results": {},
    }
    (tmp_path / ".secrets.baseline").write_text(json.dumps(baseline))
    monkeypatch.chdir(tmp_path)

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the redactor opened a network connection")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    r = Redactor(key=KEY, environment=False)
    for secret in CORPUS:
        r.redact(secret.text)
    assert not marker.exists()


# -- logs ----------------------------------------------------------------------------------------


def test_log_records_are_redacted_message_args_and_traceback() -> None:
    key = "sk_live_" + random_key(40)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("redline.test.secrets")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("calling with %s", key)
        logger.warning(f"inline {key}")
        try:
            raise ValueError(f"bad key {key}")
        except ValueError:
            logger.exception("failed")
        logger.warning("stack", stack_info=True, extra={"k": key})
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert key not in text
    assert text.count("[REDACTED:stripe-key:") == 3
    assert "ValueError" in text  # the traceback is kept, redacted


def test_the_cli_log_handler_redacts(capsys: pytest.CaptureFixture[str]) -> None:
    configure_cli_logging()
    configure_cli_logging()  # idempotent
    key = "ghp_" + random_key(36)
    logging.getLogger("redline.test.cli").warning("token %s", key)
    err = capsys.readouterr().err
    assert key not in err and err.count("[REDACTED:github-token:") == 1
    assert err.startswith("redline: warning: ")


def test_the_module_functions_use_one_redactor() -> None:
    assert get_redactor() is get_redactor()
    assert redact("") == ""


# -- speed ---------------------------------------------------------------------------------------


def test_nothing_backtracks_for_seconds_on_hostile_text(redactor: Redactor) -> None:
    """Minified code (one huge line, keywords everywhere), a megabyte run of one character, a
    huge quoted blob, URLs without end: each well under a few seconds (measured: < 1 s)."""
    cases = {
        "minified": "var a='http://x/p:q';function(k){return k.token||''};{password:e}" * 4000,
        "run": "a" * 1_000_000,
        "key run": ("apikey" + "a" * 5000 + " ") * 100,
        "blob": '"' + rand(500_000) + '"',
        "urls": "://" + "a:" * 200_000,
        "quotes": "'a'" * 200_000,
        # The second round's rules: netrc heads, joined literals, base32 near a context word.
        "machines": "machine a login b " * 50_000,
        "defaults": "default " * 100_000,
        "joined literals": '"a" "b" + ' * 50_000,
        "base32 line": "pat " + "abcdefgh234567" * 50_000,
        "url users": ("://" + "a1B2" * 8) * 20_000,
        "npm words": "npm_" * 100_000,
        "config line": "SECRET_KEY=" + "x(" * 200_000,
    }
    for name, text in cases.items():
        start = time.perf_counter()
        redactor.redact(text)
        assert time.perf_counter() - start < 8, name


def test_importing_redline_redaction_does_not_import_detect_secrets() -> None:
    code = (
        "import sys, redline.redaction, redline.redaction.logfilter\n"
        "redline.redaction.redact('redline 0.1.0 language server starting (pid 12)')\n"
        "assert 'detect_secrets' not in sys.modules, 'detect-secrets imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
