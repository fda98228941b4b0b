"""A corpus of fake secrets, one or more per kind, as they appear in real files.

Every value is fake — random characters from a fixed seed, with "fake" in it where the format
allows — but format-valid, so the detectors fire on it as they would on a real one. Each entry
says which file holds it and which strings ("needles") must never leave Redline: the secret
value, or for a multi-line key every line of key material.

`ORDINARY` is code that mentions tokens, passwords and keys the way ordinary code does: none of
it may be masked.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass, field
from typing import Any

_R = random.Random(20260325)
ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def rand(n: int, alphabet: str = ALNUM, rng: random.Random = _R) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def random_key(n: int, alphabet: str = ALNUM, rng: random.Random = _R) -> str:
    """Random characters with at least one upper-case letter, lower-case letter and digit, and
    no long lower-case run (what a generated key looks like)."""
    while True:
        value = rand(n, alphabet, rng)
        if (
            any(c.isupper() for c in value)
            and any(c.islower() for c in value)
            and any(c.isdigit() for c in value)
            and not any(value[i : i + 7].islower() for i in range(len(value) - 6))
        ):
            return value


def b64url(data: dict[str, str]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def pem(label: str, lines: int = 8) -> tuple[str, list[str]]:
    body = [random_key(64, B64) for _ in range(lines)] + [random_key(24, B64) + "=="]
    text = f"-----BEGIN {label}-----\n" + "\n".join(body) + f"\n-----END {label}-----\n"
    return text, body


def fragments_in(needle: str, text: str, width: int = 10) -> list[str]:
    """The `width`-character pieces of `needle` found in `text`: a secret masked in part (its
    first 27 characters, say) leaves the rest readable."""
    if len(needle) <= width:
        return [needle] if needle in text else []
    return [
        needle[i : i + width]
        for i in range(len(needle) - width + 1)
        if needle[i : i + width] in text
    ]


@dataclass
class Secret:
    kind: str
    path: str
    text: str  # the file's content (or the part of it that holds the secret)
    needles: list[str] = field(default_factory=list)


def _corpus() -> list[Secret]:
    s: list[Secret] = []

    def add(kind: str, path: str, text: str, *needles: str) -> None:
        s.append(Secret(kind, path, text, list(needles)))

    # -- cloud and source hosting --------------------------------------------------------------
    aws_id = "AKIA" + rand(12, UPPER_DIGITS) + "FAKE"
    aws_secret = random_key(40, B64)
    add(
        "aws-key-pair",
        "config/aws.ini",
        f"[default]\naws_access_key_id = {aws_id}\naws_secret_access_key = {aws_secret}\n",
        aws_id,
        aws_secret,
    )
    bare_aws = random_key(40, B64)
    add(
        "aws-secret-bare",
        "ops/credentials.csv",
        "User name,Access key ID,Secret access key\n"
        f"deploy-bot,ASIA{rand(16, UPPER_DIGITS)},{bare_aws}\n",
        bare_aws,
    )
    for prefix in ("ghp_", "gho_", "ghs_", "ghu_"):
        token = prefix + random_key(36)
        add(
            f"github-{prefix[:3]}",
            f"ci/github_{prefix[:3]}.sh",
            f"export GH_TOKEN={token}\n",
            token,
        )
    fine = "github_pat_11FAKE" + random_key(17) + "_" + random_key(59)
    add("github-fine-grained", "ci/release.py", f'GITHUB = "{fine}"\n', fine)
    gitlab = "glpat-" + random_key(20, URLSAFE)
    add("gitlab-token", ".gitlab/ci.yml", f"variables:\n  GITLAB_PAT: {gitlab}\n", gitlab)
    google = "AIza" + random_key(35, URLSAFE)
    add("google-api-key", "web/maps.js", f'const mapsKey = "{google}";\n', google)
    gocspx = "GOCSPX-" + random_key(28, URLSAFE)
    add(
        "google-oauth-secret",
        "web/oauth.json",
        json.dumps({"web": {"client_id": "1234-fake.apps", "client_secret": gocspx}}) + "\n",
        gocspx,
    )
    azure_key = base64.b64encode(_R.randbytes(64)).decode()
    add(
        "azure-storage-key",
        "infra/storage.cs",
        'var conn = "DefaultEndpointsProtocol=https;AccountName=fakeacct;'
        f'AccountKey={azure_key};EndpointSuffix=core.windows.net";\n',
        azure_key,
    )
    # -- chat, payment, messaging ----------------------------------------------------------------
    xoxb = f"xoxb-{rand(12, string.digits)}-{rand(13, string.digits)}-{random_key(24)}"
    add("slack-bot-token", "bots/slack.py", f'SLACK_BOT = "{xoxb}"\n', xoxb)
    xoxp = f"xoxp-{rand(12, string.digits)}-{rand(12, string.digits)}-{random_key(32)}"
    add("slack-user-token", "bots/user.py", f"client = WebClient({xoxp!r})\n", xoxp)
    hook = f"T{rand(8, UPPER_DIGITS)}/B{rand(10, UPPER_DIGITS)}/{random_key(24)}"
    add(
        "slack-webhook",
        "bots/notify.py",
        f'WEBHOOK = "https://hooks.slack.com/services/{hook}"\n',
        hook,
        hook.split("/")[-1],
    )
    stripe_live = "sk_live_" + random_key(99)
    add("stripe-live", "billing/stripe.py", f'stripe.api_key = "{stripe_live}"\n', stripe_live)
    stripe_test = "sk_test_" + random_key(40)
    add("stripe-test", "billing/test_stripe.py", f"KEY = '{stripe_test}'\n", stripe_test)
    stripe_rk = "rk_live_" + random_key(40)
    add("stripe-restricted", "billing/reports.rb", f'Stripe.api_key = "{stripe_rk}"\n', stripe_rk)
    whsec = "whsec_" + random_key(32)
    add("stripe-webhook-secret", "billing/hooks.ts", f"const endpoint = '{whsec}';\n", whsec)
    twilio_sid = "AC" + rand(32, HEX)
    twilio_token = rand(32, HEX)
    add(
        "twilio",
        "sms/twilio_client.py",
        f'ACCOUNT = "{twilio_sid}"\nTWILIO_AUTH_TOKEN = "{twilio_token}"\n',
        twilio_sid,
        twilio_token,
    )
    twilio_key = "SK" + rand(32, HEX)
    add("twilio-api-key", "sms/keys.txt", f"api key sid: {twilio_key}\n", twilio_key)
    sendgrid = "SG." + random_key(22, URLSAFE) + "." + random_key(43, URLSAFE)
    add("sendgrid", "mail/send.py", f"sg = SendGridAPIClient('{sendgrid}')\n", sendgrid)
    mailchimp = rand(32, HEX) + "-us6"
    add("mailchimp", "mail/list.php", f"$mc = new Mailchimp('{mailchimp}');\n", mailchimp)
    square = "sq0atp-" + random_key(22, URLSAFE)
    square_secret = "sq0csp-" + random_key(43, URLSAFE)
    add(
        "square",
        "pay/square.env.example.yml",
        f"access_token: {square}\napplication_secret: {square_secret}\n",
        square,
        square_secret,
    )
    discord_bot = (
        "M" + random_key(23, URLSAFE) + "." + random_key(6) + "." + random_key(27, URLSAFE)
    )
    add("discord-bot", "bots/discord.js", f"client.login('{discord_bot}');\n", discord_bot)
    discord_hook = f"{rand(18, string.digits)}/{random_key(68, URLSAFE)}"
    add(
        "discord-webhook",
        "bots/alerts.py",
        f'URL = "https://discord.com/api/webhooks/{discord_hook}"\n',
        discord_hook.split("/")[1],
    )
    telegram = f"{rand(10, string.digits)}:AA{random_key(33, URLSAFE)}"
    add("telegram-bot", "bots/telegram.py", f'bot = Bot(token="{telegram}")\n', telegram)
    # -- package registries and AI providers ----------------------------------------------------
    npm_rc = "npm_" + random_key(36)
    add(
        "npm-npmrc",
        "web/.npmrc",
        f"//registry.npmjs.org/:_authToken={npm_rc}\nalways-auth=true\n",
        npm_rc,
    )
    npm_bare = "npm_" + random_key(36)
    add(
        "npm-token",
        ".github/workflows/publish.yml",
        f"env:\n  NODE_AUTH_TOKEN: {npm_bare}\n",
        npm_bare,
    )
    pypi = "pypi-AgEIcHlwaS5vcmc" + random_key(80, URLSAFE)
    add(
        "pypi-token",
        "release/.pypirc.ini",
        f"[pypi]\nusername = __token__\npassword = {pypi}\n",
        pypi,
    )
    openai_key = "sk-proj-" + random_key(48, URLSAFE)
    add("openai", "ai/client.py", f'client = OpenAI(api_key="{openai_key}")\n', openai_key)
    anthropic = "sk-ant-api03-" + random_key(93, URLSAFE) + "AA"
    add(
        "anthropic",
        "ai/claude.ts",
        f"const anthropic = new Anthropic({{ apiKey: '{anthropic}' }});\n",
        anthropic,
    )
    hf = "hf_" + random_key(34)
    add("huggingface", "ai/hub.py", f'login(token="{hf}")\n', hf)
    # -- tokens and keys in structures ----------------------------------------------------------
    jwt_payload = b64url({"sub": "fake-user-4821", "name": "Fake Person", "iat": "1516239022"})
    jwt_sig = random_key(43, URLSAFE)
    jwt = f"{b64url({'alg': 'HS256', 'typ': 'JWT'})}.{jwt_payload}.{jwt_sig}"
    add("jwt", "api/fixtures.json", json.dumps({"session": jwt}) + "\n", jwt_payload, jwt_sig)
    rsa, rsa_lines = pem("RSA PRIVATE KEY")
    add("pem-rsa", "keys/deploy_rsa.pem", rsa, *rsa_lines)
    ec, ec_lines = pem("EC PRIVATE KEY", 3)
    add("pem-ec-in-code", "app/tls.py", f'KEY = """\n{ec}"""\n', *ec_lines)
    ossh, ossh_lines = pem("OPENSSH PRIVATE KEY", 6)
    add("openssh-private-key", "keys/id_ed25519", ossh, *ossh_lines)
    pgp, pgp_lines = pem("PGP PRIVATE KEY BLOCK", 10)
    add("pgp-private-key", "keys/signing.asc", pgp, *pgp_lines)
    pk8, pk8_lines = pem("PRIVATE KEY", 5)
    escaped = pk8.replace("\n", "\\n")
    add(
        "gcp-service-account",
        "infra/service-account.json",
        '{\n  "type": "service_account",\n  "client_email": "svc@fake.iam.gserviceaccount.com",\n'
        f'  "private_key": "{escaped}"\n}}\n',
        *pk8_lines,
    )
    ppk_private = [random_key(64, B64) for _ in range(2)] + [random_key(40, B64)]
    ppk_mac = rand(64, HEX)
    ppk = (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: fake-deploy-key\n"
        f"Public-Lines: 2\n{random_key(64, B64)}\n{random_key(20, B64)}\n"
        "Private-Lines: 3\n" + "\n".join(ppk_private) + f"\nPrivate-MAC: {ppk_mac}\n"
    )
    add("putty-ppk", "keys/deploy.ppk", ppk, *ppk_private, ppk_mac)
    kube_key, _ = pem("EC PRIVATE KEY", 3)
    kube_b64 = base64.b64encode(kube_key.encode()).decode()
    add(
        "kubeconfig-client-key",
        "deploy/kubeconfig.yaml",
        "apiVersion: v1\nusers:\n- name: fake-admin\n  user:\n"
        f"    client-certificate-data: {base64.b64encode(b'not a key').decode()}\n"
        f"    client-key-data: {kube_b64}\n",
        kube_b64[40:120],
        kube_b64[-60:],
    )
    # -- connection strings -----------------------------------------------------------------------
    pg = "Pg-" + random_key(16)
    add(
        "postgres-dsn",
        "app/db.py",
        f'DATABASE_URL = "postgresql://app_user:{pg}@db.internal:5432/app"\n',
        pg,
    )
    my = "My-" + random_key(14)
    add("mysql-dsn", "app/legacy.php", f"$dsn = 'mysql://root:{my}@127.0.0.1:3306/shop';\n", my)
    mongo = "Mg" + random_key(18)
    add(
        "mongodb-dsn",
        "app/mongo.go",
        f'const uri = "mongodb+srv://svc:{mongo}@cluster0.fake.mongodb.net/db"\n',
        mongo,
    )
    redis = "Rd" + random_key(20)
    add("redis-dsn", "app/cache.yml", f"redis_url: redis://:{redis}@cache:6379/0\n", redis)
    basic = "Ba-" + random_key(12)
    add(
        "basic-auth-url",
        "scripts/mirror.sh",
        f"git clone https://deploy:{basic}@git.fake-host.dev/team/repo.git\n",
        basic,
    )
    # -- assignments, headers, config files ------------------------------------------------------
    env_pw, env_key, env_tok = random_key(18), random_key(50, URLSAFE), random_key(32)
    add(
        "dotenv",
        ".env",
        f"DATABASE_PASSWORD={env_pw}\nSECRET_KEY={env_key}\nAPI_TOKEN={env_tok}\nDEBUG=false\n",
        env_pw,
        env_key,
        env_tok,
    )
    sh_secret = random_key(40, URLSAFE)
    add("env-export", "docker/entry.sh", f"export SESSION_SIGNING={sh_secret}\n", sh_secret)
    yaml_pw = "fake-" + random_key(12)
    add(
        "yaml-pass",
        "config/database.yml",
        f"production:\n  adapter: postgresql\n  user: app\n  pass: {yaml_pw}\n",
        yaml_pw,
    )
    json_pw = "Fk!" + random_key(13)
    add(
        "json-pwd",
        "config/settings.json",
        json.dumps({"db": {"user": "app", "pwd": json_pw}}, indent=2) + "\n",
        json_pw,
    )
    tuple_pw = "tuple-" + random_key(12)
    add(
        "python-auth-tuple",
        "scripts/fetch.py",
        f'resp = requests.get(URL, auth=("deploy", "{tuple_pw}"), timeout=5)\n',
        tuple_pw,
    )
    bearer = random_key(40, URLSAFE)
    add(
        "authorization-bearer",
        "scripts/call_api.py",
        f'headers = {{"Authorization": "Bearer {bearer}"}}\n',
        bearer,
    )
    basic_hdr = base64.b64encode(f"svc:{random_key(12)}".encode()).decode()
    add(
        "authorization-basic",
        "scripts/curl.sh",
        f'curl -H "Authorization: Basic {basic_hdr}" https://api.fake-host.dev/v1\n',
        basic_hdr,
    )
    x_api = random_key(32)
    add("x-api-key-header", "scripts/ping.sh", f"curl -H 'X-Api-Key: {x_api}' $URL\n", x_api)
    py_pw = "Sw0rd-" + random_key(10)
    add("python-password", "app/settings.py", f'DB_PASSWORD = "{py_pw}"\nDEBUG = False\n', py_pw)
    go_key = random_key(32)
    add("go-assignment", "svc/main.go", f'\tapiKey := "{go_key}"\n', go_key)
    js_secret = random_key(28)
    add("js-client-secret", "web/auth.js", f"const clientSecret = '{js_secret}';\n", js_secret)
    java_pw = "J4va-" + random_key(10)
    add(
        "java-constant",
        "svc/Db.java",
        f'    private static final String PASSWORD = "{java_pw}";\n',
        java_pw,
    )
    ini_pw = "ini" + random_key(12)
    add("ini-password", "config/app.ini", f"[db]\nuser = app\npassword = {ini_pw}\n", ini_pw)
    hex_lit = rand(48, HEX)
    add("high-entropy-hex", "app/seed.py", f'INTEGRATION_SEED = "{hex_lit}"\n', hex_lit)
    b64_lit = random_key(44, B64)
    add("high-entropy-base64", "app/blob.py", f"BLOB = '{b64_lit}'\n", b64_lit)
    _second_round(add)
    return s


# Django's get_random_secret_key() alphabet: a key from it holds `(`, `#`, `$`, ...
DJANGO = string.ascii_lowercase + string.digits + "!@#$%^&*(-_=+)"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
BASE32_LOWER = string.ascii_lowercase + "234567"
WORDS = [
    "anchor", "basalt", "cobalt", "dune", "ember", "fjord", "granite", "harbor", "island",
    "juniper", "kelp", "lagoon", "meadow", "nectar", "orchid", "pebble", "quartz", "river",
    "saffron", "tundra", "umber", "violet", "willow", "yarrow", "zephyr",
]  # fmt: skip


def _second_round(add: Any) -> None:
    """The kinds an independent attack run (issue 23) got through to the model: each value is
    built here at run time, so no committed string looks like a live credential."""
    mailgun = "key-" + rand(32, HEX)
    mailgun2 = "key-" + rand(32, HEX)
    add(
        "mailgun-key",
        "mail/mailgun.js",
        f'const mg = mailgun.client({{ username: "api", key: "{mailgun}" }});\n'
        f'MAILGUN = "{mailgun2}";\n',
        mailgun,
        mailgun2,
    )
    shpat = "shpat_" + rand(32, HEX)
    add(
        "shopify-admin-token",
        "shop/admin.py",
        f'session = shopify.Session(SHOP_URL, "2024-01", "{shpat}")\n',
        shpat,
    )
    shop_others = ["shpss_" + rand(32, HEX), "shpca_" + rand(32, HEX), "shppa_" + rand(32, HEX)]
    add(
        "shopify-other-tokens",
        "shop/app.rb",
        "".join(f'  client_{i} = Shopify::Client.new("{t}")\n' for i, t in enumerate(shop_others)),
        *shop_others,
    )
    # A bot token of today: the user id (19 digits) in base64, a 6-character timestamp and a
    # 38-character HMAC (detect-secrets' pattern stops after 27 of them).
    user_id = str(_R.randrange(10**18, 10**19))
    discord = (
        base64.b64encode(user_id.encode()).decode().rstrip("=")
        + "."
        + random_key(6, URLSAFE)
        + "."
        + random_key(38, URLSAFE)
    )
    add("discord-bot-modern", "bots/discord_bot.py", f'bot.run("{discord}")\n', discord)
    sentry = rand(32, HEX)
    sentry_js = rand(32, HEX)
    add(
        "sentry-dsn",
        "app/monitoring.py",
        f'sentry_sdk.init(dsn="https://{sentry}@o{rand(6, string.digits)}.ingest.sentry.io/'
        f'{rand(7, string.digits)}")\n'
        f'# web: Sentry.init({{ dsn: "https://{sentry_js}@sentry.fake-host.dev/3" }})\n',
        sentry,
        sentry_js,
    )
    xml_pw, xml_smtp, xml_token = "Xm1-" + random_key(12), "Sm7p-" + random_key(10), random_key(32)
    add(
        "xml-password",
        "config/app.config.xml",
        "<configuration>\n  <database>\n    <user>app</user>\n"
        f"    <password>{xml_pw}</password>\n  </database>\n  <appSettings>\n"
        f'    <add key="SmtpPassword" value="{xml_smtp}" />\n  </appSettings>\n'
        f"  <apiToken>{xml_token}</apiToken>\n</configuration>\n",
        xml_pw,
        xml_smtp,
        xml_token,
    )
    netrc_one, netrc_multi = "Nr" + random_key(14), rand(6, string.ascii_lowercase) + "42"
    add(
        "netrc-line",
        "ci/netrc-template",
        f"machine artifacts.fake-host.dev login ci password {netrc_one}\n"
        f"machine mirror.fake-host.dev\n  login mirror\n  password {netrc_multi}\n",
        netrc_one,
        netrc_multi,
    )
    ado, ado_ps = rand(52, BASE32_LOWER), rand(52, BASE32_LOWER)
    add(
        "azure-devops-pat",
        "pipelines/ado.ps1",
        f'$pat = "{ado_ps}"\n# bash: export AZURE_DEVOPS_EXT_PAT={ado}\n',
        ado,
        ado_ps,
    )
    age = "AGE-SECRET-KEY-1" + rand(58, BECH32.upper())
    add(
        "age-secret-key",
        "keys/age-identity.txt",
        f"# created: 2025-01-01T00:00:00Z\n# public key: age1{rand(58, BECH32)}\n{age}\n",
        age,
    )
    split_py, split_js, split_php = random_key(24), random_key(32), random_key(99)
    add(
        "stripe-split-literals",
        "billing/split_key.py",
        f'STRIPE = "sk_live_" "{split_py}"\n'
        f'# js: const key = "sk_live_" + "{split_js}";\n'
        f"# php: $key = 'rk_live_' . '{split_php}';\n",
        split_py,
        split_js,
        split_php,
    )
    django = rand(50, DJANGO)
    conf_key = "Q" + random_key(35)
    add(
        "conf-secret-key",
        "deploy/app.conf",
        f"[app]\nSECRET_KEY={django}\nSIGNING_SECRET_KEY = {conf_key}\nDEBUG=false\n",
        django,
        conf_key,
    )
    libpq, libpq_quoted = "Lp" + random_key(12), "Lq " + random_key(10)
    add(
        "libpq-dsn",
        "app/pg.py",
        f'conn = psycopg2.connect("host=db.internal port=5432 password={libpq} dbname=app")\n'
        f"DSN = \"host=replica user=ro password='{libpq_quoted}' sslmode=require\"\n",
        libpq,
        libpq_quoted,
    )
    phrase = " ".join(_R.choice(WORDS) for _ in range(5))
    yaml_tilde = "~" + random_key(12)
    add(
        "yaml-pass-variants",
        "config/mail.yml",
        f'smtp:\n  user: mailer\n  pass: "{phrase}"\nbackup:\n  pass: {yaml_tilde}\n',
        phrase,
        yaml_tilde,
    )
    gcp_key_id = rand(40, HEX)
    add(
        "gcp-private-key-id",
        "infra/gcp-sa.json",
        json.dumps(
            {
                "type": "service_account",
                "project_id": "fake-project",
                "private_key_id": gcp_key_id,
                "client_email": "svc@fake-project.iam.gserviceaccount.com",
            },
            indent=2,
        )
        + "\n",
        gcp_key_id,
    )
    npm_long, npm_short = "npm_" + random_key(44), "npm_" + random_key(30)
    add(
        "npm-token-any-length",
        "web/Makefile",
        f"publish:\n\tnpm publish --auth {npm_long}\n\tnpm whoami --otp {npm_short}\n",
        npm_long,
        npm_short,
    )


SECOND_ROUND = [
    "mailgun-key", "shopify-admin-token", "shopify-other-tokens", "discord-bot-modern",
    "sentry-dsn", "xml-password", "netrc-line", "azure-devops-pat", "age-secret-key",
    "stripe-split-literals", "conf-secret-key", "libpq-dsn", "yaml-pass-variants",
    "gcp-private-key-id", "npm-token-any-length",
]  # fmt: skip


CORPUS: list[Secret] = _corpus()
KINDS = sorted({c.kind for c in CORPUS})

# Files whose every line must reach the model unchanged.
ORDINARY = {
    "app/tokens.py": '''"""Token handling: nothing secret here."""

import os

from app.auth import get_token, refresh

MAX_TOKENS = 100
TOKEN_TTL_SECONDS = 3600


class Session:
    def __init__(self, token: str, password: str | None = None) -> None:
        self.token = token
        self.password = password

    def refresh(self) -> str:
        token = get_token()
        self.token = refresh(token)
        return self.token


def load(password_file: str) -> str:
    secret = os.environ["APP_SECRET"]
    api_key = os.getenv("OPENAI_API_KEY", "")
    password_hash = hash_password(secret)
    token_type = "bearer"
    headers = {"Authorization": f"Bearer {api_key}", "X-Api-Key": api_key}
    max_tokens = 100
    if password_hash and token_type:
        return headers["Authorization"]
    return read_secret(password_file)
''',
    "web/login.ts": """export interface Credentials {
  username: string;
  password: string;
  token?: string;
}

export function login(creds: Credentials): Promise<Response> {
  const password = creds.password;
  const headers = { Authorization: `Bearer ${creds.token}` };
  return fetch("/api/login", { method: "POST", headers, body: JSON.stringify({ password }) });
}
""",
    "config/defaults.yml": """server:
  port: 8080
  timeout_seconds: 30
auth:
  token_ttl: 3600
  password_min_length: 12
  secret_name: app-session
logging:
  level: info
""",
}
