"""A labelled corpus for the credential detector, so its recall and false alarms can be measured.

Positives are random characters in each credential's shape (never a real or published secret),
placed bare, in sentences, in env/YAML/JSON/TOML lines, code fences and other languages.
Negatives are ordinary notes plus the hard cases that tempt a naive scanner: talk about secrets,
placeholders, env reads, public keys, certificates, digests, ids, URLs without a password.
Everything comes from one seeded ``random.Random``, so every run sees the same corpus.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

SEED = 20_240_603
PER_SHAPE = 300
PER_CATEGORY = 300

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
B32 = string.ascii_uppercase + "234567"
UPPER_ALNUM = string.ascii_uppercase + string.digits
PW_SYMBOLS = "!@#$%^&*-_=+?.~"

WORDS = (
    "apple river stone cloud tiger maple orbit piano candle harbor violet falcon garden meadow copper "
    "silver winter summer autumn spring rocket planet forest ocean canyon desert island bridge castle "
    "dragon wizard pepper mango lemon cherry coffee butter rabbit turtle penguin panda koala otter "
    "bicycle window mirror ladder pillow blanket kitchen marble crystal thunder breeze shadow sunset "
    "morning evening journey mountain valley pebble feather lantern compass anchor sailor pirate "
    "basket button cactus daisy ember fossil glacier horizon igloo jungle kettle lobster nugget"
).split()
NAMES = "alice bob carol dave erin frank grace heidi ivan judy mallory niaj olivia peggy rupert sybil trent".split()
VENDORS = (
    "GitHub",
    "GitLab",
    "Slack",
    "Stripe",
    "OpenAI",
    "AWS",
    "Google",
    "Azure",
    "Heroku",
    "npm",
    "PyPI",
    "Twilio",
    "SendGrid",
    "Mailgun",
    "Discord",
    "Telegram",
    "Shopify",
    "DigitalOcean",
)
HOSTS = (
    "db.internal.example.com",
    "10.0.3.12",
    "cluster0.ab12c.mongodb.net",
    "localhost",
    "pg-prod.eu-west-1.rds.amazonaws.com",
    "cache.example.net",
    "mq.example.org",
    "sql01.corp.local",
)


@dataclass(frozen=True)
class Case:
    """One labelled text: ``label`` is a shape name (positive) or a benign category (negative)."""

    label: str
    context: str
    text: str


def _s(rng: random.Random, alphabet: str, n: int) -> str:
    # The same draws as `rng.choice(alphabet)` n times (CPython's choice is `seq[self._randbelow(len(seq))]`),
    # without a method call per character: the corpus is built at collection, ~3.5 million characters.
    below, size = rng._randbelow, len(alphabet)  # type: ignore[attr-defined]
    return "".join([alphabet[below(size)] for _ in range(n)])


def _b64(raw: bytes, url: bool = False) -> str:
    return (base64.urlsafe_b64encode(raw) if url else base64.b64encode(raw)).decode()


def _camel(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(WORDS).capitalize() for _ in range(n))


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


# --- secrets in each shape ----------------------------------------------------------------


def _password(rng: random.Random) -> str:
    style = rng.randrange(4)
    if style == 0:  # a password manager's
        return _s(rng, ALNUM + PW_SYMBOLS, rng.randint(12, 24))
    if style == 1:  # a person's: Word + digits + symbol
        return rng.choice(WORDS).capitalize() + rng.choice(PW_SYMBOLS + "") + str(rng.randint(10, 9999))
    if style == 2:  # a passphrase
        sep = rng.choice("-._")
        return sep.join(rng.choice(WORDS) for _ in range(rng.randint(4, 6)))
    return rng.choice(WORDS) + str(rng.randint(1, 99)) + rng.choice(WORDS).upper()[:3] + rng.choice(PW_SYMBOLS)


def _pem_lines(rng: random.Random, head: str, lines: int) -> str:
    body = head + _s(rng, B64, 64 * lines - len(head))
    return "\n".join(body[i : i + 64] for i in range(0, len(body), 64))


def _private_key(rng: random.Random) -> str:
    kind = rng.randrange(7)
    lines = rng.randint(4, 22)
    if kind == 6:
        return (
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: me@laptop\nPublic-Lines: 2\n"
            f"{_pem_lines(rng, 'AAAAC3NzaC1lZDI1NTE5AAAAI', 2)}\nPrivate-Lines: 1\n{_s(rng, B64, 44)}="
        )
    label, head, extra = (
        [
            ("RSA PRIVATE KEY", "MIIEpAIBAAKCAQEA", ""),
            ("EC PRIVATE KEY", "MHcCAQEEI", ""),
            ("PRIVATE KEY", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", ""),
            ("ENCRYPTED PRIVATE KEY", "MIIFHzBJBgkqhkiG9w0BBQ0wPDAbBgkqhkiG9w0BBQww", ""),
            (
                "RSA PRIVATE KEY",
                "",
                "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC," + _s(rng, HEX.upper(), 32) + "\n\n",
            ),
            ("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAA", ""),
        ][kind]
        if kind < 6
        else ("", "", "")
    )
    if rng.random() < 0.2:
        label, head, extra = "PGP PRIVATE KEY BLOCK", "lQOYBF", "Version: GnuPG v2\n\n"
    end = f"\n-----END {label}-----" if rng.random() < 0.6 else ""
    return f"-----BEGIN {label}-----\n{extra}{_pem_lines(rng, head, lines)}{end}"


def _jwt(rng: random.Random) -> str:
    alg = rng.choice(["HS256", "RS256", "ES256", "PS256", "EdDSA", "HS512"])
    header = {"alg": alg, "typ": "JWT"}
    if rng.random() < 0.5:
        header["kid"] = _s(rng, HEX, 16)
    payload = {
        "sub": _uuid(rng),
        "iat": rng.randint(1_600_000_000, 1_800_000_000),
        "exp": rng.randint(1_800_000_000, 1_900_000_000),
    }
    if rng.random() < 0.5:
        payload["iss"] = f"https://auth.{rng.choice(WORDS)}.example.com/"
        payload["email"] = f"{rng.choice(NAMES)}@example.com"
    sig = rng.randbytes({"RS256": 256, "PS256": 256, "ES256": 64, "EdDSA": 64}.get(alg, 32))

    def enc(obj: object) -> str:
        return _b64(json.dumps(obj, separators=(",", ":")).encode(), url=True).rstrip("=")

    return f"{enc(header)}.{enc(payload)}.{_b64(sig, url=True).rstrip('=')}"


def _gcp(rng: random.Random) -> str:
    project = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{rng.randint(100, 999)}"
    doc = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": _s(rng, HEX, 40),
        "private_key": _private_key_pkcs8(rng),
        "client_email": f"{rng.choice(WORDS)}@{project}.iam.gserviceaccount.com",
        "client_id": str(rng.randint(10**20, 10**21 - 1)),
    }
    if rng.random() < 0.3:
        del doc["private_key_id"]
    return json.dumps(doc, indent=rng.choice([None, 2]))


def _private_key_pkcs8(rng: random.Random) -> str:
    return f"-----BEGIN PRIVATE KEY-----\n{_pem_lines(rng, 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC', rng.randint(3, 12))}\n-----END PRIVATE KEY-----\n"


def _azure(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return (
            f"DefaultEndpointsProtocol=https;AccountName={rng.choice(WORDS)}{rng.randint(1, 99)};"
            f"AccountKey={_b64(rng.randbytes(64))};EndpointSuffix=core.windows.net"
        )
    service = rng.choice(["servicebus", "servicebus"])
    tail = f";EntityPath={rng.choice(WORDS)}" if rng.random() < 0.3 else ""
    return (
        f"Endpoint=sb://{rng.choice(WORDS)}-{rng.choice(WORDS)}.{service}.windows.net/;"
        f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={_b64(rng.randbytes(32))}{tail}"
    )


def _db_url(rng: random.Random) -> str:
    scheme = rng.choice(
        [
            "postgres",
            "postgresql",
            "mysql",
            "mongodb+srv",
            "mongodb",
            "redis",
            "rediss",
            "amqp",
            "amqps",
            "mssql",
            "mariadb",
            "postgresql+psycopg2",
            "mysql+pymysql",
        ]
    )
    user = (
        rng.choice(["app", "admin", "svc_reader", "root", "etl", "api"])
        if "redis" not in scheme or rng.random() < 0.5
        else ""
    )
    pw = rng.choice(
        [
            _s(rng, ALNUM, rng.randint(12, 32)),
            _password(rng).replace("@", "%40").replace("/", "%2F").replace("#", "%23").replace("?", "%3F"),
            _s(rng, ALNUM, 6) + rng.choice("#!$*") + _s(rng, ALNUM, 6),
        ]
    )
    port = {"postgres": 5432, "mysql": 3306, "redis": 6379, "amqp": 5672, "mssql": 1433}
    host = rng.choice(HOSTS)
    suffix = f":{port.get(scheme.split('+')[0].rstrip('s'), 5432)}" if "srv" not in scheme else ""
    return f"{scheme}://{user}:{pw}@{host}{suffix}/{rng.choice(WORDS)}"


def _url_password(rng: random.Random) -> str:
    scheme = rng.choice(["https", "http", "ftp", "sftp", "smtp", "git+https", "webdav"])
    user = rng.choice(["deploy", "oauth2", "ci-bot", rng.choice(NAMES), "admin"])
    pw = rng.choice(
        [
            _s(rng, ALNUM, rng.randint(10, 30)),
            _password(rng).replace("@", "%40").replace("/", "%2F").replace("#", "%23").replace("?", "%3F"),
        ]
    )
    path = rng.choice(["", "/", "/repo.git", "/upload", "/v2/", "/dav/files"])
    return f"{scheme}://{user}:{pw}@{rng.choice(['registry', 'files', 'git', 'mail'])}.{rng.choice(WORDS)}.example.com{path}"


def _discord(rng: random.Random) -> str:
    user_id = str(rng.randint(10**16, 10**19 - 1)).encode()
    return f"{_b64(user_id).rstrip('=')}.{_s(rng, B64URL, 6)}.{_s(rng, B64URL, rng.choice([27, 38]))}"


def _openai(rng: random.Random) -> str:
    kind = rng.randrange(4)
    if kind == 0:
        return f"sk-{_s(rng, ALNUM, 20)}T3BlbkFJ{_s(rng, ALNUM, 20)}"
    prefix = ["proj", "svcacct", "admin"][kind - 1]
    return f"sk-{prefix}-{_s(rng, B64URL, rng.randint(20, 80))}T3BlbkFJ{_s(rng, B64URL, rng.randint(20, 80))}"


TOKENS: dict[str, tuple[str, Callable[[random.Random], str]]] = {  # shape -> (vendor, generator)
    "aws_access_key_id": ("AWS", lambda r: r.choice(["AKIA", "ASIA"]) + _s(r, B32, 16)),
    "github_token": (
        "GitHub",
        lambda r: r.choice(
            [f"gh{r.choice('pousr')}_{_s(r, ALNUM, 36)}", f"github_pat_{_s(r, ALNUM, 22)}_{_s(r, ALNUM, 59)}"]
        ),
    ),
    "gitlab_token": (
        "GitLab",
        lambda r: r.choice(
            [
                f"glpat-{_s(r, B64URL, 20)}",
                f"glpat-{_s(r, B64URL, 27)}.01.{_s(r, HEX, 9)}",
                f"{r.choice(['gldt', 'glrt', 'glptt'])}-{_s(r, B64URL, 20)}",
            ]
        ),
    ),
    "slack_token": (
        "Slack",
        lambda r: r.choice(
            [
                f"xoxb-{_s(r, string.digits, r.randint(10, 13))}-{_s(r, string.digits, 13)}-{_s(r, ALNUM, 24)}",
                f"xoxp-{_s(r, string.digits, 11)}-{_s(r, string.digits, 11)}-{_s(r, string.digits, 13)}-{_s(r, HEX, 32)}",
                f"xapp-1-A{_s(r, UPPER_ALNUM, 10)}-{_s(r, string.digits, 13)}-{_s(r, HEX, 64)}",
            ]
        ),
    ),
    "slack_webhook": (
        "Slack",
        lambda r: r.choice(
            [
                f"https://hooks.slack.com/services/T{_s(r, UPPER_ALNUM, 8)}/B{_s(r, UPPER_ALNUM, 10)}/{_s(r, ALNUM, 24)}",
                f"https://hooks.slack.com/triggers/T{_s(r, UPPER_ALNUM, 10)}/{_s(r, string.digits, 13)}/{_s(r, HEX, 32)}",
            ]
        ),
    ),
    "stripe_secret_key": (
        "Stripe",
        lambda r: f"{r.choice('sr')}k_{r.choice(['live', 'test'])}_{_s(r, ALNUM, r.choice([24, 99]))}",
    ),
    "google_api_key": ("Google", lambda r: "AIzaSy" + _s(r, B64URL, 33)),
    "openai_api_key": ("OpenAI", _openai),
    "anthropic_api_key": ("Anthropic", lambda r: f"sk-ant-{r.choice(['api03', 'admin01'])}-{_s(r, B64URL, 93)}AA"),
    "huggingface_token": ("Hugging Face", lambda r: "hf_" + _s(r, string.ascii_letters, 34)),
    "npm_token": ("npm", lambda r: "npm_" + _s(r, ALNUM, 36)),
    "pypi_token": ("PyPI", lambda r: "pypi-AgEIcHlwaS5vcmc" + _s(r, B64URL, r.randint(50, 180))),
    "twilio_key": ("Twilio", lambda r: "SK" + _s(r, HEX, 32)),
    "sendgrid_key": ("SendGrid", lambda r: f"SG.{_s(r, B64URL, 22)}.{_s(r, B64URL, 43)}"),
    "mailgun_key": (
        "Mailgun",
        lambda r: r.choice([f"key-{_s(r, HEX, 32)}", f"{_s(r, HEX, 32)}-{_s(r, HEX, 8)}-{_s(r, HEX, 8)}"]),
    ),
    "discord_bot_token": ("Discord", _discord),
    "telegram_bot_token": ("Telegram", lambda r: f"{r.randint(10**7, 10**10 - 1)}:AA{_s(r, B64URL, 33)}"),
    "shopify_token": ("Shopify", lambda r: f"shp{r.choice(['at', 'ca', 'pa', 'ss'])}_{_s(r, HEX, 32)}"),
    "digitalocean_token": ("DigitalOcean", lambda r: f"do{r.choice('opr')}_v1_{_s(r, HEX, 64)}"),
    "heroku_api_key": ("Heroku", lambda r: "HRKU-AA" + _s(r, B64URL, 58)),
    "jwt": ("Auth0", _jwt),
}


ENV_NAMES = {
    "aws_access_key_id": "AWS_ACCESS_KEY_ID",
    "slack_token": "SLACK_BOT_TOKEN",
    "slack_webhook": "SLACK_WEBHOOK_URL",
    "huggingface_token": "HF_TOKEN",
    "pypi_token": "TWINE_PASSWORD",
    "shopify_token": "SHOPIFY_ACCESS_TOKEN",
    "jwt": "SESSION_TOKEN",
    "digitalocean_token": "DIGITALOCEAN_TOKEN",
    "heroku_api_key": "HEROKU_API_KEY",
}

# --- contexts: where a secret sits in a note ----------------------------------------------
TOKEN_CONTEXTS = {
    "bare": "{s}",
    "period": "{s}.",
    "comma": "{s}, thanks",
    "backticks": "`{s}`",
    "backticks_period": "Token: `{s}`.",
    "single_quotes": "'{s}'",
    "double_quotes": '"{s}"',
    "parentheses": "(the new one: {s})",
    "brackets": "[{s}]",
    "angle": "<{s}>",
    "exclamation": "{s}!",
    "question": "is it {s}?",
    "semicolon": "key={s};",
    "sentence_start": "{s} is the {V} token for the staging box",
    "sentence_colon": "Here is the {V} token for the staging box: {s}",
    "sentence_mid": "Use {s} when the deploy script asks for {V} access.",
    "sentence_dash": "remember my {V} credential {s} - rotate it in June",
    "bullet": "- {V}: {s}",
    "env": "{N}={s}",
    "env_export": 'export {N}="{s}"',
    "env_comment": "{N}='{s}'  # prod",
    "yaml": "{n}: {s}",
    "yaml_nested": 'deploy:\n  {n}: "{s}"\n  region: eu-west-1',
    "json": '{{"{n}": "{s}", "region": "eu-west-1"}}',
    "toml": '[{v}]\n{n} = "{s}"\ntimeout = 30',
    "fence_env": "```\n{N}={s}\n```",
    "fence_yaml": "```yaml\nenv:\n  {N}: {s}\n```",
    "fence_python": '```python\nclient = Client("{s}")\n```',
    "fence_json": '```json\n{{"{n}": "{s}"}}\n```',
    "french": "Mon jeton {V} est {s}, ne le partage pas.",
    "german": "Der {V}-Schlüssel lautet {s}.",
    "spanish": "La clave de {V} es {s}; cámbiala el lunes.",
    "japanese": "{V}のトークンは{s}です。",
    "russian": "Мой токен {V}: {s}",
    "chinese": "我的{V}密钥是{s}。",
    "portuguese": "A chave do {V} é {s}.",
    "italian": "Il token di {V} è «{s}».",
    "korean": "{V} 토큰은 {s} 입니다",
    "emoji": "🔑 {s} 🙈",
    "tab_line": "token\t{s}\n",
    "url_query": "https://api.example.com/v1/items?access_token={s}&limit=10",
    "header_token": "Authorization: token {s}",
}
BLOB_CONTEXTS = {
    "bare": "{s}",
    "intro": "Here's the deploy key for the build box:\n{s}",
    "fence": "```\n{s}\n```",
    "fence_lang": "```pem\n{s}\n```",
    "yaml_block": "tls:\n  key: |\n{s_indent}",
    "env_one_line": 'PRIVATE_KEY="{s_escaped}"',
    "json_escaped": '{{"key": "{s_escaped}"}}',
    "french": "Voici la clé du serveur :\n{s}",
    "german": "Schlüssel für den Server:\n{s}",
    "japanese": "サーバーの鍵:\n{s}",
    "russian": "Ключ от сервера:\n{s}",
}
CONN_CONTEXTS = {
    "bare": "{s}",
    "period": "{s}.",
    "backticks": "`{s}`",
    "double_quotes": '"{s}"',
    "parentheses": "({s})",
    "env": "{N}={s}",
    "env_export": 'export {N}="{s}"',
    "yaml": "{n}: {s}",
    "yaml_quoted": '{n}: "{s}"',
    "json": '{{"{n}": "{s}"}}',
    "toml": '{n} = "{s}"',
    "fence": "```\n{N}={s}\n```",
    "sentence": "The {V} connection string is {s} (prod, read-only).",
    "sentence_mid": "Connect with {s} from the bastion.",
    "cli": "client --url '{s}' --timeout 5",
    "french": "La chaîne de connexion {V} : {s}",
    "german": "Verbindungszeichenfolge für {V}: {s}",
    "spanish": "La cadena de conexión es {s}.",
    "japanese": "{V}の接続文字列は {s} です。",
    "russian": "Строка подключения: {s}",
    "chinese": "连接字符串：{s}",
}


def _fill(template: str, s: str, vendor: str, env: str) -> str:
    indent = "\n".join("    " + line for line in s.splitlines())
    return template.format(
        s=s,
        V=vendor,
        N=env,
        n=env.lower(),
        v=vendor.lower().replace(" ", "_"),
        s_indent=indent,
        s_escaped=json.dumps(s)[1:-1],
    )


# --- shapes whose context is part of the shape --------------------------------------------
PASSWORD_TEMPLATES = {
    "yaml": "password: {p}",
    "yaml_title": "Password: {p}",
    "env": "PASSWORD={p}",
    "env_db": "DB_PASSWORD={p}",
    "env_export": "export PGPASSWORD='{p}'",
    "yaml_quoted": 'db_password: "{p}"',
    "json": '{{"username": "{u}", "password": "{p}"}}',
    "toml": 'password = "{p}"',
    "ini": '[database]\nuser = "{u}"\npassword = "{p}"',
    "fence_env": "```\nMYSQL_ROOT_PASSWORD={p}\n```",
    "fence_yaml": "```yaml\nauth:\n  user: {u}\n  password: {p}\n```",
    "sentence": "My wifi password is {p}",
    "sentence_for": "the password for the NAS is {p}.",
    "sentence_colon": "Bank password: {p} (don't forget!)",
    "sentence_backticks": "Router admin password is `{p}`.",
    "cli": "mysql -u {u} --password={p} prod",
    "cli_space": "sshpass --password {p} ssh {u}@box",
    "pair": "wifi: HomeNet, password: {p}",
    "passphrase": "The passphrase to unlock the backup is {p}",
    "camel": 'dbPassword = "{p}"',
    "french": "Le mot de passe du wifi est {p}",
    "french_colon": "mot de passe : {p}",
    "german": "Das WLAN-Passwort ist {p}.",
    "german_colon": "Passwort: {p}",
    "german_for": "Kennwort für den Router: {p}",
    "spanish": "La contraseña del correo es {p}",
    "spanish_colon": "contraseña: {p}",
    "portuguese": "A senha do banco é {p}",
    "italian": "La password del router è {p}",
    "dutch": "Het wachtwoord is {p}",
    "russian": "Пароль от почты: {p}",
    "russian_dash": "пароль — {p}",
    "japanese": "WiFiのパスワードは{p}です",
    "japanese_colon": "パスワード：{p}",
    "chinese": "密码是{p}",
    "chinese_colon": "邮箱密码：{p}",
    "korean": "비밀번호는 {p} 입니다",
    "polish": "Hasło do wifi: {p}",
    "turkish": "Şifre: {p}",
    "swedish": "Lösenord: {p}",
    "netrc": "machine api.example.com login {u} password {p}",
    "sql": "CREATE USER app WITH PASSWORD '{p}';",
    "mysql": "ALTER USER '{u}'@'%' IDENTIFIED BY '{p}';",
    "abbrev": "pw: {p}",
    "german_lautet": "Das Passwort lautet {p}",
    "query": "https://example.com/login?user={u}&password={p}",
    "wifi_key": "The Wi-Fi key is {p}",
    "wlan_key": "WLAN-Schlüssel: {p}",
    "bare_after_comma": "Gmail: {u}@example.com, password {p}!",
    "for_email": "smtp password for noreply@example.com: {p}",
    "router_digits": "Passwort für die Fritzbox: {d}",
    "ruby": "{{ user: '{u}', :password => '{p}' }}",
    "go": 'password := "{p}"',
    "arrow": "admin password -> {p}",
}
SECRET_KEYS = (
    "api_key",
    "API_KEY",
    "apiKey",
    "client_secret",
    "CLIENT_SECRET",
    "secret_key",
    "SECRET_KEY",
    "app_secret",
    "webhook_secret",
    "signing_secret",
    "access_token",
    "auth_token",
    "refresh_token",
    "token",
    "encryption_key",
    "master_key",
    "SESSION_SECRET",
    "JWT_SECRET",
    "consumer_secret",
    "x-api-key",
)
SECRET_PROSE = ("API key", "client secret", "access token", "webhook secret", "secret", "auth token", "API token")
SECRET_TEMPLATES = {
    "yaml": "{k}: {v}",
    "env": "{K}={v}",
    "env_export": 'export {K}="{v}"',
    "json": '{{"{k}": "{v}"}}',
    "toml": '{k} = "{v}"',
    "header": "X-API-Key: {v}",
    "curl": "curl -H 'x-api-key: {v}' https://api.example.net/v1/items",
    "fence": "```\n{K}={v}\n```",
    "fence_python": '```python\n{k} = "{v}"\n```',
    "sentence": "the {kp} is {v}",
    "sentence_for": "{kp} for the staging tenant: {v}",
    "sentence_backticks": "New {kp}: `{v}`.",
    "french": "La clé API est {v}",
    "german": "API-Schlüssel: {v}",
    "spanish": "La clave API es {v}",
    "japanese": "APIキーは{v}です",
    "russian": "API ключ: {v}",
    "chinese": "密钥：{v}",
    "korean": "API 키: {v}",
    "portuguese": "chave de API: {v}",
    "italian": "chiave API: {v}",
    "laravel": "APP_KEY=base64:{b}",
    "php": "'{k}' => '{v}',",
    "go": 'apiKey := "{v}"',
    "oauth_json": '{{"installed": {{"client_id": "{n}.apps.googleusercontent.com", "client_secret": "GOCSPX-{g}"}}}}',
}
BEARER_TEMPLATES = {
    "header": "Authorization: Bearer {v}",
    "curl": 'curl -H "Authorization: Bearer {v}" https://api.example.org/me',
    "python": 'headers = {{"Authorization": "Bearer {v}"}}',
    "token_scheme": "Authorization: Token {v}",
    "lower": "authorization: bearer {v}",
    "prose": "Use bearer token {v} for the admin API",
    "fence": "```http\nGET /v1/items\nAuthorization: Bearer {v}\n```",
    "french": "En-tête : Authorization: Bearer {v}",
    "japanese": "ヘッダーは Authorization: Bearer {v} です",
}
AWS_SECRET_TEMPLATES = {
    "ini": "aws_secret_access_key = {s}",
    "env": "AWS_SECRET_ACCESS_KEY={s}",
    "env_export": 'export AWS_SECRET_ACCESS_KEY="{s}"',
    "profile_pair": "[default]\naws_access_key_id = {id}\naws_secret_access_key = {s}",
    "json_pair": '{{"AccessKeyId": "{id}", "SecretAccessKey": "{s}"}}',
    "colon_pair": "{id}:{s}",
    "slash_pair": "{id} / {s}",
    "sentence": "AWS secret key: {s}",
    "sentence_is": "my aws secret is {s}.",
    "french": "La clé secrète AWS est {s}",
    "german": "AWS-Geheimschlüssel: {s}",
    "japanese": "AWSのシークレットキーは{s}です",
    "russian": "Секретный ключ AWS: {s}",
    "cli": "aws configure set aws_secret_access_key {s}",
    "yaml": "SecretAccessKey: {s}",
    "fence": "```\nAWS_ACCESS_KEY_ID={id}\nAWS_SECRET_ACCESS_KEY={s}\n```",
}
HEROKU_UUID_TEMPLATES = {
    "env": "HEROKU_API_KEY={u}",
    "prose": "heroku api key: {u}",
    "toml": 'heroku_api_key = "{u}"',
    "sentence": "Heroku API key is {u}",
    "export": "export HEROKU_API_KEY={u}",
    "json": '{{"heroku_api_key": "{u}"}}',
    "short": "Heroku key: {u}",
    "french": "Clé API Heroku : {u}",
}
TWILIO_TOKEN_TEMPLATES = {
    "env": "TWILIO_AUTH_TOKEN={h}",
    "prose": "twilio auth token: {h}",
    "yaml": "twilio:\n  auth_token: {h}",
    "sentence": "The Twilio auth token is {h}",
    "json": '{{"twilioAuthToken": "{h}"}}',
}
BASIC_TEMPLATES = {
    "header": "Authorization: Basic {b}",
    "curl": "curl -H 'Authorization: Basic {b}' https://intranet.example.com",
    "json": '{{"headers": {{"Authorization": "Basic {b}"}}}}',
}


def _secret_value(rng: random.Random) -> str:
    return rng.choice(
        [
            _s(rng, ALNUM, rng.randint(24, 64)),
            _s(rng, HEX, rng.choice([32, 40, 64])),
            _b64(rng.randbytes(rng.choice([24, 32, 48]))),
            _b64(rng.randbytes(32), url=True).rstrip("="),
            f"{rng.choice(['live', 'prod', 'tok'])}_{_s(rng, ALNUM, 32)}",
        ]
    )


def _opaque_token(rng: random.Random) -> str:
    return rng.choice(
        [
            _s(rng, ALNUM, rng.randint(32, 64)),
            "ory_at_" + _s(rng, B64URL, rng.randint(60, 120)),
            "EAA" + _s(rng, ALNUM, rng.randint(90, 180)),
            _s(rng, HEX, 40),
            _b64(rng.randbytes(30), url=True),
        ]
    )


def _cases(
    label: str, contexts: dict[str, str], make: Callable[[random.Random, str], str], rng: random.Random, n: int
) -> list[Case]:
    """``n`` cases, cycling through every context so each one is exercised."""
    names = list(contexts)
    return [Case(label, names[i % len(names)], make(rng, contexts[names[i % len(names)]])) for i in range(n)]


def _token_cases(shape: str, rng: random.Random, n: int) -> list[Case]:
    vendor, gen = TOKENS[shape]
    env = ENV_NAMES.get(shape, shape.upper())
    contexts = dict(TOKEN_CONTEXTS)
    if shape == "jwt":
        contexts |= {"bearer_header": "Authorization: Bearer {s}", "cookie": "Cookie: session={s}; Path=/"}
    return _cases(shape, contexts, lambda r, t: _fill(t, gen(r), vendor, env), rng, n)


def _positive_cases_for(shape: str, rng: random.Random, n: int = PER_SHAPE) -> list[Case]:
    half = n // 2
    if shape == "heroku_api_key":
        return _token_cases(shape, rng, half) + _cases(
            shape,
            {f"uuid_{k}": v for k, v in HEROKU_UUID_TEMPLATES.items()},
            lambda r, t: t.format(u=_uuid(r)),
            rng,
            n - half,
        )
    if shape == "twilio_key":
        return _token_cases(shape, rng, half) + _cases(
            shape,
            {f"auth_token_{k}": v for k, v in TWILIO_TOKEN_TEMPLATES.items()},
            lambda r, t: t.format(h=_s(r, HEX, 32)),
            rng,
            n - half,
        )
    if shape in TOKENS:
        return _token_cases(shape, rng, n)
    if shape == "private_key":
        return _cases(shape, BLOB_CONTEXTS, lambda r, t: _fill(t, _private_key(r), "SSH", "PRIVATE_KEY"), rng, n)
    if shape == "gcp_service_account":
        contexts = {k: BLOB_CONTEXTS[k] for k in ("bare", "intro", "fence", "french", "german", "japanese")}
        contexts["env_json"] = "GOOGLE_CREDENTIALS='{s}'"
        return _cases(shape, contexts, lambda r, t: _fill(t, _gcp(r), "GCP", "GOOGLE_CREDENTIALS"), rng, n)
    conn = {
        "azure_connection_string": (_azure, "Azure", "AZURE_STORAGE_CONNECTION_STRING"),
        "database_url": (_db_url, "Postgres", "DATABASE_URL"),
        "url_password": (_url_password, "WebDAV", "REMOTE_URL"),
    }
    if shape in conn:
        gen, vendor, env = conn[shape]
        return _cases(shape, CONN_CONTEXTS, lambda r, t: _fill(t, gen(r), vendor, env), rng, n)
    if shape == "password_assignment":

        def password(r: random.Random, t: str) -> str:
            digits = "-".join(_s(r, string.digits, 4) for _ in range(5))
            return t.format(p=_password(r), u=r.choice(NAMES), d=digits)

        return _cases(shape, PASSWORD_TEMPLATES, password, rng, n)
    if shape == "secret_assignment":

        def secret(r: random.Random, t: str) -> str:
            k = r.choice(SECRET_KEYS)
            return t.format(
                k=k,
                K=k.upper().replace("-", "_"),
                kp=r.choice(SECRET_PROSE),
                v=_secret_value(r),
                b=_b64(r.randbytes(32)),
                n=_s(r, string.digits, 12),
                g=_s(r, B64URL, 28),
            )

        return _cases(shape, SECRET_TEMPLATES, secret, rng, n)
    if shape == "bearer_token":
        return _cases(shape, BEARER_TEMPLATES, lambda r, t: t.format(v=_opaque_token(r)), rng, n)
    if shape == "aws_secret_access_key":
        return _cases(
            shape,
            AWS_SECRET_TEMPLATES,
            lambda r, t: t.format(s=_s(r, B64, 40), id=TOKENS["aws_access_key_id"][1](r)),
            rng,
            n,
        )
    if shape == "basic_auth":

        def basic(r: random.Random, t: str) -> str:
            pair = f"{r.choice(NAMES)}:{r.choice([_s(r, ALNUM, r.randint(10, 24)), _password(r)])}"
            return t.format(b=_b64(pair.encode()))

        return _cases(shape, BASIC_TEMPLATES, basic, rng, n)
    raise KeyError(shape)


SHAPES = (
    *TOKENS,
    "private_key",
    "gcp_service_account",
    "azure_connection_string",
    "database_url",
    "url_password",
    "password_assignment",
    "secret_assignment",
    "bearer_token",
    "aws_secret_access_key",
    "basic_auth",
)


# --- benign notes, including the hard ones ------------------------------------------------


def _pick(rng: random.Random, options: tuple[str, ...] | list[str]) -> str:
    return rng.choice(options)


def _neg_talk(rng: random.Random) -> str:
    v, n, name = rng.choice(VENDORS), rng.randint(2, 120), rng.choice(NAMES).capitalize()
    return _pick(
        rng,
        [
            f"Rotate the {v} token every {n} days.",
            "Never paste passwords into chat.",
            f"The {v} API key lives in 1Password under 'Work'.",
            f"Reset my {v} password next week.",
            f"Password must be at least {n} characters with one digit.",
            "We use short-lived tokens, not long-lived keys.",
            f"Remind me to revoke the old {v} deploy key on Friday.",
            "My password manager is Bitwarden.",
            "Password: see the vault entry 'router'.",
            "The secret to good risotto is patience.",
            f"Tokens are billed per 1K tokens; budget {n} dollars.",
            f"Token limit is {n}k tokens per request.",
            f"The client secret is stored in AWS Secrets Manager as prod/{v.lower()}.",
            f"secret santa: {name}",
            f"Access token expires after {n * 60} seconds.",
            f"My API key for {v} is in the .env file, not in git.",
            "password hint: first pet's name",
            "passwords must rotate quarterly",
            "credential stuffing attacks spiked in May",
            f"token: see Slack DM from {name}",
            f"password: (ask {name})",
            f"{name} changed the wifi password yesterday.",
            f"Asked {name} to share the {v} credentials through the vault, not email.",
            f"The API key for {v} was leaked last year, so we rotated everything.",
            "Use passkeys where the site supports them.",
            f"2FA backup codes are printed and in the safe ({n} left).",
            "Secret: I'm planning a surprise party for Mum!",
            "The secret ingredient is smoked paprika.",
            f"The token for the bus is {n} cents now.",
            "Le mot de passe est dans le coffre-fort.",
            "Das Passwort steht im Passwortmanager.",
            "La contraseña está en el gestor de contraseñas.",
            "パスワードはパスワードマネージャーにあります。",
            "Пароль хранится в менеджере паролей.",
            "密码保存在密码管理器里。",
            "Le jeton expire dans une heure.",
            "API-Schlüssel bitte nie ins Wiki kopieren.",
            "비밀번호는 관리자에게 물어보세요.",
            f"A senha do wifi mudou, pergunte ao {name}.",
            f"Il token di {v} scade tra {n} giorni.",
            f"API key rotation is scheduled for {n} May.",
            f"Access key: the blue one on the {rng.choice(WORDS)} keyring",
            f"password reset link for {v} expired",
            f"The secret is out: {name} is moving to Lisbon.",
            "I keep my passwords in KeePassXC synced over Syncthing.",
            "Don't reuse the token across environments.",
            f"password protected PDF from {name}, ask her",
            "Password Manager: KeePassXC",
            "password hashing with Argon2id",
            f"xoxo-see-you-on-the-{n}th-{name.lower()}",
            f"Love, xoxo {name}",
            f"the password is the name of our first {rng.choice(WORDS)}",
            f"My password is stored in 1Password, vault {rng.choice(WORDS).capitalize()}",
            "password: at least 12 characters, one symbol",
            f"Wifi password: on the fridge next to the {rng.choice(WORDS)}",
            "Password: same as the email one",
            "password: N/A",
            "password = None",
            "password: null",
            "token: true",
            "secret: false",
            f"password changed on 2024-05-{n % 28 + 1:02d}",
            "passwords: never reuse",
            "password-protected: yes",
            "password: auto-generated",
            "PASSWORD_MIN_LENGTH=12",
            f"the API key is in {name}'s email from Tuesday",
            "Passwort: steht im Tresor",
            "mot de passe : voir le coffre",
            "contraseña: la de siempre",
            "пароль: спроси у Ивана",
            "パスワード：いつものやつ",
            "secret = secrets.token_hex(32)",
            f"token: see {v} settings → Developer → Tokens",
            "Secret Santa budget is 20 EUR",
            "API key: pending approval",
        ],
    )


def _neg_prefix_talk(rng: random.Random) -> str:
    return _pick(
        rng,
        [
            "GitHub classic tokens start with ghp_ and fine-grained ones with github_pat_.",
            "AWS long-term keys begin with AKIA, temporary ones with ASIA.",
            "OpenAI keys look like sk-proj-… now.",
            "Slack bot tokens are xoxb-, user tokens xoxp-.",
            "Stripe: sk_live_ is secret, pk_live_ is publishable.",
            "GitLab PATs have the glpat- prefix.",
            "npm tokens start with npm_ and PyPI ones with pypi-.",
            "Hugging Face tokens start with hf_.",
            "JWTs start with eyJ because that is base64 for '{\"'.",
            "Google API keys begin with AIza.",
            "PEM files start with -----BEGIN and end with -----END.",
            "-----BEGIN OPENSSH PRIVATE KEY----- marks a private key; never share that file.",
            "grep -rE 'AKIA[0-9A-Z]{16}' . finds access key ids",
            "regex for classic tokens: ghp_[A-Za-z0-9]{36}",
            "Add xoxb-* to the scanner allowlist? No.",
            "SendGrid keys start with SG. and have three parts.",
            "DigitalOcean tokens: dop_v1_ followed by 64 hex characters.",
            "Shopify admin tokens begin shpat_.",
            "Heroku's new keys start with HRKU-.",
            "Anthropic keys start with sk-ant-api03-.",
            "A JWT has three parts: header.payload.signature, e.g. eyJhbGciOiJIUzI1NiJ9 is just a header.",
            'The header eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9 decodes to {"alg":"RS256","typ":"JWT"}.',
            "Twilio API keys start with SK, account SIDs with AC.",
            "Mailgun keys used to look like key-<32 hex>.",
            "Discord bot tokens have three dot-separated parts.",
            "Telegram bot tokens look like <bot id>:<35 chars>.",
            "The detect-secrets baseline flags anything named password=",
            "gitleaks rule: (?i)aws_secret_access_key",
            "postgres URLs look like postgres://user:pass@host/db (placeholder!)",
            "Authorization: Bearer <token> is the header format",
            "Basic auth is base64 of user:password.",
            "from huggingface_hub import hf_hub_download",
            "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 is not a token",
            "The CSS class sk-spinner-double-bounce-container animates",
            "npm_config_registry is an env var",
            "In .env files we write KEY=value; secrets never go in git.",
            "Use `gh auth token` to print your token.",
        ],
    )


def _neg_placeholder(rng: random.Random) -> str:
    x = rng.choice("xX0*•")
    value = _pick(
        rng,
        [
            "ghp_" + x * 36,
            "github_pat_" + "x" * 22 + "_" + "x" * 59,
            "AKIAIOSFODNN7EXAMPLE",
            "AKIA" + "X" * 16,
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "sk-...REDACTED",
            "sk-proj-…",
            "sk-" + "x" * 48,
            "sk_live_" + "X" * 24,
            "sk_live_…4242",
            "xoxb-your-bot-token",
            "xoxb-0000000000-0000000000-" + "x" * 24,
            "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
            "postgres://user:password@localhost:5432/mydb",
            "mysql://root:<password>@db/app",
            "mongodb+srv://<username>:<password>@cluster0.example.mongodb.net",
            "redis://:****@cache:6379",
            "postgres://postgres:postgres@localhost:5432/test",
            "amqp://guest:guest@localhost:5672/",
            "https://user:pass@example.com/",
            "changeme",
            "********",
            "<your-api-key>",
            "${API_KEY}",
            "{{ api_token }}",
            "[REDACTED]",
            "<redacted>",
            "REDACTED",
            "glpat-" + x * 20,
            "hf_" + "X" * 34,
            "npm_" + "0" * 36,
            "SG." + "x" * 22 + "." + "x" * 43,
            "AIzaSy" + "X" * 33,
            "dop_v1_" + "0" * 64,
            "sk-****************abcd",
            "ghp_••••••••",
            "AKIA****************",
            "eyJhbGciOiJIUzI1NiJ9.<payload>.<signature>",
            "your-token-here",
            "ghp_1234567890abcdefghijklmnopqrstuvwxyz",
            "sk_test_1234567890abcdefghijklmnop",
            "YOUR_API_KEY",
            "<paste token>",
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "0123456789abcdef0123456789abcdef",
        ],
    )
    key = rng.choice(
        ["api_key", "GITHUB_TOKEN", "password", "token", "secret", "AWS_SECRET_ACCESS_KEY", "DATABASE_URL"]
    )
    return _pick(
        rng,
        [
            f"{key}={value}",
            f"{key}: {value}",
            f'{{"{key}": "{value}"}}',
            f'{key} = "{value}"',
            f"Example from the docs: {value}",
            f"```\n{key.upper()}={value}\n```",
            f"replace {value} with the real one",
            f"password: {value}",
            f"Authorization: Bearer {value}",
            f"the token looks like `{value}`",
            "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
            "-----BEGIN RSA PRIVATE KEY-----\n<paste your key here>\n-----END RSA PRIVATE KEY-----",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nMIIE...(truncated)\n-----END OPENSSH PRIVATE KEY-----",
            'PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\\nXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX\\n-----END PRIVATE KEY-----"',
        ],
    )


def _neg_env_reads(rng: random.Random) -> str:
    env = rng.choice(
        [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "STRIPE_SECRET_KEY",
            "SLACK_BOT_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "API_KEY",
            "CLIENT_SECRET",
            "DATABASE_URL",
        ]
    )
    low = env.lower()
    return _pick(
        rng,
        [
            f'os.environ["{env}"]',
            f'api_key = os.environ["{env}"]',
            f'token = os.getenv("{env}")',
            f'password = os.environ.get("{env}", "")',
            "password = getpass.getpass()",
            "password = getpass()",
            f"token: ${{{{ secrets.{env} }}}}",
            f"env:\n  {env}: ${{{{ secrets.{env} }}}}",
            f"const key = process.env.{env};",
            f'password: "{{{{ vault_{low} }}}}"',
            'password = keyring.get_password("db", "admin")',
            f"{env}=${{{env}}}",
            f"{env}=$({env.lower()}_from_vault)",
            f"PGPASSWORD=$(cat /run/secrets/{low})",
            f'export {env}="${env}"',
            "api_key: !Ref ApiKeyParam",
            "password: !vault |",
            f"token = settings.{env}",
            f'client_secret = config["oauth"]["{low}"]',
            '"password": "%(db_password)s"',
            f"ENV['{env}']",
            f'System.getenv("{env}")',
            f"$env:{env}",
            f'secret = Secret.from_secrets_manager("prod/{low}")',
            "password: ENC[AES256_GCM,data:" + _s(rng, B64, 24) + "=,iv:" + _s(rng, B64, 16) + "=,type:str]",
            f"{env}: '@Microsoft.KeyVault(SecretUri=https://kv.vault.azure.net/secrets/{low})'",
            f'token := os.Getenv("{env}")',
            f'let key = std::env::var("{env}")?;',
            f'password = ENV.fetch("{env}")',
            f"docker run -e {env} app",
            f"aws ssm get-parameter --name /prod/{low} --with-decryption",
            f"kubectl create secret generic app --from-literal={low}=$({low})",
            f"echo ${env} | docker login --password-stdin",
            f"password_file: /run/secrets/{low}",
            f"{env}_FILE=/run/secrets/{low}",
        ],
    )


def _neg_public_keys(rng: random.Random) -> str:
    host = f"{rng.choice(NAMES)}@{rng.choice(WORDS)}"
    ed = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + _s(rng, B64, 43) + f" {host}"
    rsa = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ" + _s(rng, B64, 500) + f" {host}"
    ecdsa = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB" + _s(rng, B64, 90) + "="
    pem = f"-----BEGIN PUBLIC KEY-----\n{_pem_lines(rng, 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA', 6)}\n-----END PUBLIC KEY-----"
    pgp = f"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n{_pem_lines(rng, 'mQINBF', 8)}\n-----END PGP PUBLIC KEY BLOCK-----"
    age = "age1" + _s(rng, "023456789acdefghjklmnpqrstuvwxyz", 58)
    return _pick(
        rng,
        [
            ed,
            rsa,
            ecdsa,
            pem,
            pgp,
            f"My SSH public key is {ed} — add it to the server.",
            f"authorized_keys:\n{ed}\n{rsa}",
            f"public_key: {ed}",
            f"AWS EC2 key pair (public): {rsa}",
            f"age public key: {age}",
            f"GPG fingerprint: {' '.join(_s(rng, HEX.upper(), 4) for _ in range(10))}",
            f"```\n{pem}\n```",
            f'ssh_authorized_key: "{ed}"',
            f"Deploy key (public) for the repo: {ed}",
            f"Clé publique SSH : {ed}",
        ],
    )


def _neg_certificates(rng: random.Random) -> str:
    body = _pem_lines(rng, "MIID", rng.randint(6, 20))
    cut = rng.randint(4, 64)
    cert = f"-----BEGIN CERTIFICATE-----\n{body[:-64]}{_s(rng, B64, cut)}{rng.choice(['', '=', '=='])}\n-----END CERTIFICATE-----"
    other = rng.choice(["CERTIFICATE REQUEST", "X509 CRL", "DH PARAMETERS", "PGP SIGNATURE", "PGP MESSAGE"])
    return _pick(
        rng,
        [
            cert,
            f"AWS IoT device certificate:\n{cert}",
            f"Let's Encrypt cert for {rng.choice(WORDS)}.example.org\n{cert}",
            f"ca.pem:\n```\n{cert}\n```",
            f"-----BEGIN {other}-----\n{_pem_lines(rng, 'MII', 5)}\n-----END {other}-----",
            "tls:\n  certificate: |\n" + "\n".join("    " + line for line in cert.splitlines()),
            f'CERT="{json.dumps(cert)[1:-1]}"',
            f"Certificat du serveur (AWS ACM) :\n{cert}",
        ],
    )


def _neg_publishable(rng: random.Random) -> str:
    pk = f"pk_{rng.choice(['live', 'test'])}_{_s(rng, ALNUM, rng.choice([24, 99]))}"
    mapbox = "pk.eyJ1IjoiZXhhbXBsZSIsImEiOiJjbGV4YW1wbGUifQ." + _s(rng, B64URL, 22)
    return _pick(
        rng,
        [
            f"STRIPE_PUBLISHABLE_KEY={pk}",
            f"publishableKey: '{pk}'",
            f"Stripe publishable key: {pk}",
            f"NEXT_PUBLIC_STRIPE_KEY={pk}",
            f"const stripe = Stripe('{pk}');",
            f'{{"publishable_key": "{pk}"}}',
            f"MAPBOX_PUBLIC_TOKEN={mapbox}",
            f"mapboxgl.accessToken = '{mapbox}';",
            f"The public Stripe key is {pk}.",
            f"ALGOLIA_SEARCH_ONLY_KEY={_s(rng, HEX, 32)}",
            f"Clé publique Stripe : {pk}",
        ],
    )


def _neg_sentry(rng: random.Random) -> str:
    dsn = f"https://{_s(rng, HEX, 32)}@o{rng.randint(10**5, 10**7)}.ingest.{rng.choice(['', 'us.', 'de.'])}sentry.io/{rng.randint(10**6, 10**7)}"
    return _pick(
        rng,
        [
            dsn,
            f"SENTRY_DSN={dsn}",
            f"dsn: '{dsn}'",
            f'Sentry.init({{ dsn: "{dsn}" }});',
            f'sentry_sdk.init(dsn="{dsn}", traces_sample_rate=0.1)',
            f"The DSN for the web app is {dsn}",
        ],
    )


def _neg_digests(rng: random.Random) -> str:
    h64, h40, h32 = _s(rng, HEX, 64), _s(rng, HEX, 40), _s(rng, HEX, 32)
    sri512 = "sha512-" + _b64(rng.randbytes(64))
    sri384 = "sha384-" + _b64(rng.randbytes(48))
    return _pick(
        rng,
        [
            f"sha256:{h64}",
            f"image: ghcr.io/acme/api@sha256:{h64}",
            f'"integrity": "{sri512}"',
            f'<script src="app.js" integrity="{sri384}" crossorigin="anonymous"></script>',
            f"md5: {h32}",
            f"sha1sum {h40}  ubuntu.iso",
            f"SHA256 (backup.tar.gz) = {h64}",
            f"checksum: {h64}",
            f'etag: "{h32}"',
            f"git blob {h40}",
            f"ChecksumSHA256: {_b64(rng.randbytes(32))}",
            f"S3 ETag for the AWS upload: {h32}",
            f"aws s3api head-object returned ChecksumSHA1 {_b64(rng.randbytes(20))}",
            f"Docker digest {h64[:12]}",
            f'resolved "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz#{h40}"\n  integrity {sri512}',
            f"SHA-512: {_s(rng, HEX, 128)}",
            f"Die Prüfsumme ist {h64}.",
            f"ハッシュ値: {h64}",
        ],
    )


def _neg_commit_shas(rng: random.Random) -> str:
    sha, short = _s(rng, HEX, 40), _s(rng, HEX, rng.randint(7, 12))
    return _pick(
        rng,
        [
            f"Fixed in {sha}.",
            f"git checkout {short}",
            f"commit {sha} (HEAD -> main)",
            f"Reverted {sha} — broke the AWS deploy",
            f"GITHUB_SHA={sha}",
            f"ref: {sha}",
            f"Merge pull request #{rng.randint(1, 9999)} from acme/fix {sha}",
            f"The regression came in {short}, see {sha}",
            f"pinned actions/checkout@{sha}",
            f"aws-cdk bumped at commit {sha}",
            f"Le correctif est dans {short}.",
            f"コミット {sha} で修正",
            f"COMMIT={sha.upper()}",
        ],
    )


def _neg_uuids(rng: random.Random) -> str:
    u = _uuid(rng)
    return _pick(
        rng,
        [
            f"request id {u}",
            f"order {u} shipped",
            f'{{"id": "{u}"}}',
            f"trace_id={u}",
            f"KMS key id {u}",
            f"Heroku app id: {u}",
            f"device UUID {u.upper()}",
            f"correlation-id: {u}",
            f"tenant {u}",
            f"Azure subscription id: {u}",
            f"client_id: {u}",
            f"Lambda RequestId: {u}",
            f"La commande {u} est partie.",
            f"session {u} ended",
            f'user_id = "{u}"',
        ],
    )


def _neg_arns(rng: random.Random) -> str:
    acct = str(rng.randint(10**11, 10**12 - 1))
    region = rng.choice(["us-east-1", "eu-west-1", "ap-southeast-2", "eu-central-1"])
    role = _camel(rng, rng.randint(2, 6)) + rng.choice(["", str(rng.randint(1, 99)), "Role", "V2"])
    return _pick(
        rng,
        [
            f"arn:aws:iam::{acct}:role/{role}",
            f"arn:aws:iam::{acct}:role/service-role/{role}",
            f"arn:aws:s3:::{rng.choice(WORDS)}-{rng.choice(WORDS)}/logs/2024/05/{rng.randint(10, 28)}/{role}",
            f"arn:aws:lambda:{region}:{acct}:function:{role}",
            f"arn:aws:kms:{region}:{acct}:key/{_uuid(rng)}",
            f"arn:aws:secretsmanager:{region}:{acct}:secret:prod/{rng.choice(WORDS)}/database-credentials-{_s(rng, ALNUM, 6)}",
            f"AWS account {acct}",
            f"account id: {acct}",
            f"AWS role unique id AROA{_s(rng, UPPER_ALNUM, 17)}",
            f"IAM user id AIDA{_s(rng, UPPER_ALNUM, 17)}",
            f"aws sts get-caller-identity → Account: {acct}",
            f"aws s3 ls s3://{rng.choice(WORDS)}-logs/{role}/2024/05/",
            f"CloudFront distribution E{_s(rng, UPPER_ALNUM, 13)}",
            f"EC2 instance i-0{_s(rng, HEX, 16)} in {region}",
            f"vpc-0{_s(rng, HEX, 16)}, subnet-0{_s(rng, HEX, 16)}",
            f"Cognito user pool {region}_{_s(rng, ALNUM, 9)}",
            f"x-amz-request-id: {_s(rng, HEX.upper(), 16)}",
            f"x-amz-id-2: {_b64(rng.randbytes(57))}",
            f"AWS_REGION={region}\nAWS_ACCOUNT_ID={acct}",
            f"Assume role arn:aws:iam::{acct}:role/{role} from the CI account {acct}",
            f"x-amz-cf-id: {_b64(rng.randbytes(42), url=True)}",
            f"AWS SigV4 signature {_s(rng, HEX, 64)}",
            f"USDC token contract on AWS-hosted node: token: 0x{_s(rng, HEX, 40)}",
            f"aws cloudfront distribution {role}",
            f"AWS CodeCommit repo https://git-codecommit.{region}.amazonaws.com/v1/repos/{role}",
        ],
    )


def _neg_urls(rng: random.Random) -> str:
    user, host, word = rng.choice(NAMES), rng.choice(HOSTS), rng.choice(WORDS)
    return _pick(
        rng,
        [
            f"https://{user}@github.com/acme/{word}.git",
            f"ssh://git@{host}:22/acme/{word}.git",
            f"git@github.com:acme/{word}.git",
            f"postgres://{user}@localhost/{word}",
            f"postgresql://{user}@{host}:5432/{word}?sslmode=require",
            f"redis://{host}:6379/0",
            f"https://{word}.example.com:8443/path",
            "http://[::1]:8080/",
            f"ftp://anonymous@ftp.example.org/pub/{word}",
            f"mongodb://{host}:27017,{host}:27018/?replicaSet=rs0",
            f"https://web.archive.org/web/2020/https://{word}.example.com/",
            f"https://mastodon.social/@{user}",
            f"https://medium.com/@{user}/post-{_s(rng, HEX, 12)}",
            f"smb://{host}/share",
            f"http://{user}@{host}:8080/admin",
            f"DATABASE_URL=postgres://{user}@{host}/{word}",
            f"Le dépôt est sur https://{user}@gitlab.example.com/{word}.git",
            f"mysql://{user}@{host}:3306/{word}",
            f"amqp://{host}:5672/%2F",
            f"https://{word}.example.com/login?next=/a:b@c",
        ],
    )


def _neg_contacts(rng: random.Random) -> str:
    name, word = rng.choice(NAMES), rng.choice(WORDS)
    phone = _pick(
        rng,
        [
            f"+1 (415) 555-{rng.randint(1000, 9999)}",
            f"+44 20 7946 {rng.randint(1000, 9999)}",
            f"+81 3-1234-{rng.randint(1000, 9999)}",
            f"07700 900{rng.randint(100, 999)}",
            f"+49 30 {rng.randint(1000000, 9999999)}",
            f"+33 6 12 34 {rng.randint(10, 99)} {rng.randint(10, 99)}",
        ],
    )
    email = _pick(
        rng, [f"{name}@example.com", f"{name}.{word}+aws@example.org", f"{name}_{rng.randint(1, 99)}@mail.example.net"]
    )
    return _pick(
        rng,
        [
            f"Call {name.capitalize()} at {phone}",
            f"email: {email}",
            f"{name.capitalize()} <{email}>, {phone}",
            f"WhatsApp {phone}",
            f"Contact: {email} / {phone}",
            f"Téléphone du plombier : {phone}",
            f"Напиши на {email}",
            f"電話番号は{phone}です",
            f"mailto:{email}?subject=Hello",
        ],
    )


def _neg_scripts(rng: random.Random) -> str:
    fragments = [
        "مرحبا بالعالم",
        "שלום עולם",
        "नमस्ते दुनिया",
        "สวัสดีชาวโลก",
        "Γειά σου Κόσμε",
        "გამარჯობა",
        "Բարեւ աշխարհ",
        "你好世界",
        "こんにちは世界",
        "안녕하세요",
        "Привет, мир",
        "Привіт, світе",
        "வணக்கம்",
        "ওহে বিশ্ব",
        "ሰላም ልዑል",
        "😀",
        "🎉🎂",
        "👩‍💻",
        "🇩🇪🇯🇵",
        "❤️",
        "🙈🙉🙊",
        "🏳️‍🌈",
        "Ünïcödé",
        "ß",
        "İstanbul",
    ]
    return " ".join(rng.choice(fragments) for _ in range(rng.randint(2, 8)))


def _neg_notes(rng: random.Random) -> str:
    name, word, n = rng.choice(NAMES).capitalize(), rng.choice(WORDS), rng.randint(1, 28)
    return _pick(
        rng,
        [
            "prefers dark mode",
            "allergic to peanuts",
            f"daughter's birthday is May {n}",
            "works at Acme as a data engineer",
            "uses vim keybindings",
            "timezone Europe/Berlin",
            f"flight LH 454 on 2024-06-{n:02d} at 14:25",
            "address 221B Baker Street",
            "likes concise answers",
            "runs Ubuntu 22.04 on a ThinkPad X1",
            f"cat named {word.capitalize()}",
            f"budget 1,{n}00 EUR",
            "the bike lock combination is on the fridge",
            "gym Tuesdays 7pm",
            "prefers metric units",
            "likes espresso, no sugar",
            "codes in Rust and TypeScript",
            "macOS 14.4 on an M2",
            f"car plate AB-{n:03d}-CD",
            f"passport expires in 20{n + 10}",
            f"boarding pass for LH{n}4 is in Wallet",
            "ski pass: 3-day Zermatt",
            "house key under the blue pot",
            f"{name} is my manager; weekly 1:1 on Thursdays",
            "vegetarian, but eats fish",
            "speaks French and German",
            f"Meeting room {word.capitalize()}-{n}, 3rd floor",
            f"favourite book: The {word.capitalize()} of Time",
            f"wifi network name: {word.capitalize()}Net",
            f"order #A{n}F3-22K9-QW7Z arrives Friday",
            f"tracking 1Z{_s(rng, UPPER_ALNUM, 16)}",
            f"YouTube video https://youtu.be/{_s(rng, B64URL, 11)}",
            f"Doc: https://docs.google.com/document/d/{_s(rng, B64URL, 44)}/edit",
            f"Spotify playlist https://open.spotify.com/playlist/{_s(rng, ALNUM, 22)}",
            f"coupon SAVE{n}-{_s(rng, UPPER_ALNUM, 4)}",
            f"Booking ref {_s(rng, UPPER_ALNUM, 6)}",
            f"IBAN DE89 3704 0044 0532 0130 {n:02d}",
            f"Prefers answers in {rng.choice(['English', 'French', 'Japanese'])}",
            "no meetings before 10am",
            f"Le rendez-vous chez le dentiste est le {n} juin.",
            f"Geburtstag von {name}: {n}. März",
            f"Dropbox link https://www.dropbox.com/s/{_s(rng, string.ascii_lowercase + string.digits, 15)}/plan.pdf?dl=0",
            f"standup: https://us02web.zoom.us/j/{rng.randint(10**9, 10**11)}?pwd={_s(rng, ALNUM, 32)}",
            "My password is different for every site.",
            "The password is case-sensitive.",
            "pass: 12/15 completions",
            "the wifi at the cabin has no password",
            f"{name}'s birthday: {n}/05, gift idea: a {word} lamp",
            f"Meeting at 10:{n + 10} in room {word.upper()}",
            f"Serial: C02{_s(rng, UPPER_ALNUM, 9)}",
            "seat 14C, gate B22",
            "Remember: the Netflix password is shared with Mum, ask her.",
            f"my gitlab username is {name.lower()}_the_builder{n}",
            "key: F#m7 for the chorus",
            "Key: Value pairs are stored in DynamoDB",
            "The secret of the recipe: 2 tbsp of miso.",
            "password strength meter: zxcvbn score 4",
            "set AWS_PROFILE=prod before running terraform",
            "terraform state in s3://acme-tf-state/prod/terraform.tfstate",
            f"JIRA ticket ABC-{n}34 tracks the token refresh bug",
            f"Bitcoin address bc1q{_s(rng, '023456789acdefghjklmnpqrstuvwxyz', 38)}",
            "The WiFi is 'CoffeeShopGuest', no password",
            "passcode for the gym locker is written on my hand",
            "secret: don't tell anyone I'm learning piano",
            "Token Ring networks were popular in the 90s",
            "Her password hint is 'favorite band + year'.",
            f"Photo: IMG_202405{n:02d}_123456.jpg",
            "My license key for Sublime is in my email from 2019",
            "curl -u $USER:$PASS https://api.example.com",
            "PIN for the garage door changed",
            "session cookie name is __Host-session",
            f"My employee ID is E{rng.randint(10**7, 10**8)}",
            "Stripe test card 4242 4242 4242 4242, any CVC",
            "rotate SECRET_KEY_BASE after the incident",
            "The password is the same one as the router's.",
            "password: the usual one + !",
            "Token: ask in #infra",
            "I reset my Google password on 3 May",
            "API key (staging): requested, not received yet",
            "Mot de passe oublié ? Clique sur « Réinitialiser ».",
            "Das Passwort muss 12 Zeichen haben.",
            "tokenizer: cl100k_base",
            "wifi password: WPA2-Personal",
            "password: 2FA-enabled",
            "password: SHA-256 + salt",
            "password=123456 is the worst",
        ],
    )


def _neg_code(rng: random.Random) -> str:
    word, n = rng.choice(WORDS), rng.randint(1, 9000)
    return _pick(
        rng,
        [
            "timeout: 30",
            f"max_tokens: {n}",
            "def tokenize(text: str) -> list[str]:\n    return text.split()",
            "SELECT id, password_hash FROM users WHERE email = %s",
            "if password == confirm_password:\n    save()",
            '<input type="password" name="pwd" autocomplete="current-password">',
            "token_count = len(tokens)",
            f"secret_name: prod/{word}",
            "api_version: 2023-10-01",
            f"API_URL=https://api.{word}.example.com/v1",
            "TOKEN_TTL=3600",
            "SECRET_KEY_FILE=/run/secrets/django_key",
            "password_min_length: 12",
            "hash = hashlib.sha256(data).hexdigest()",
            "const id = crypto.randomUUID();",
            f'cache_key = f"user:{{user_id}}:{word}"',
            "kubectl create secret generic db --from-file=./password.txt",
            "docker login -u ci --password-stdin < token.txt",
            "git log --oneline | head",
            "npm install --save-dev jest",
            "aws s3 cp ./dist s3://my-bucket/ --recursive",
            "ssh-keygen -t ed25519 -C me@example.com",
            "openssl req -new -key server.key -out server.csr",
            "chmod 600 ~/.ssh/id_ed25519",
            "password = hash_password(form.password.data)",
            "self.password = hashed_pw",
            "def check(password: str) -> bool:",
            "interface Login { user: string; password: string; }",
            f'tokens = tokenizer.encode("{word}")',
            "secretsmanager = boto3.client('secretsmanager')",
            'API_KEY_HEADER = "X-API-Key"',
            "token_type: Bearer",
            "grant_type=client_credentials&scope=read",
            'jwt.decode(token, key, algorithms=["RS256"])',
            f"for token in tokens[:{n}]:",
            "PASSWORD_HASHERS = [...]",
            "Authorization: Bearer ${TOKEN}",
            "passwordless: true",
            "auth:\n  type: oauth2\n  token_url: https://auth.example.com/token",
            "access_key_id: !Ref AccessKey",
            "password_reset_timeout_days: 3",
            "public_key_pem = load_pem(path)",
            "let hashed = bcrypt::hash(password, DEFAULT_COST)?;",
            'print(f"Token usage: {usage.total_tokens}")',
            'password = "test1234"  # fixture',
            'login("admin", password="admin123")',
            'assert check_password("secret123")',
            "| password | string | required |",
            "token ids: [101, 2023, 2003, 102]",
            "token: <|endoftext|>",
            '"token_type": "Bearer", "expires_in": 3600',
            '<meta name="csrf-token" content="{{ csrf_token() }}">',
            'SECRET_KEY = env("SECRET_KEY")',
            "AUTH_PASSWORD_VALIDATORS = [",
            "PASSWORD_RESET_TIMEOUT = 259200",
            "spring.datasource.password=${DB_PASSWORD}",
            "jwt.secret=${JWT_SECRET:changeme}",
            "password = var.db_password",
            "password = random_password.db.result",
            'token = data.vault_generic_secret.app.data["token"]',
            "POSTGRES_PASSWORD: example",
            'ansible_become_password: "{{ vault_become_pass }}"',
            "token: {{ .Values.token }}",
            "const password = req.body.password;",
            "if (token === undefined) return;",
            "private readonly apiKey: string;",
            "this.secret = crypto.randomBytes(32).toString('hex')",
            'api_key: Optional[str] = Field(default=None, env="API_KEY")',
            'token_url="https://oauth2.googleapis.com/token"',
            '"password": {"type": "string", "minLength": 12}',
            'Password string `json:"password"`',
            'let token = env::var("TOKEN")?;',
            "PASSWORD=$(openssl rand -base64 32)",
            "username,password,email",
            '<label for="password">Password:</label>',
            "password: &default_password changeme",
        ],
    )


def _neg_long(rng: random.Random) -> str:
    """Long notes that mix many benign pieces, so context from one piece meets a string in another."""
    makers = [
        _neg_notes,
        _neg_code,
        _neg_arns,
        _neg_digests,
        _neg_uuids,
        _neg_talk,
        _neg_urls,
        _neg_contacts,
        _neg_commit_shas,
        _neg_public_keys,
        _neg_sentry,
        _neg_env_reads,
    ]
    parts: list[str] = []
    while sum(len(p.encode()) + 1 for p in parts) < rng.randint(600, 1900):
        parts.append(rng.choice(makers)(rng))
    return "\n".join(parts)[:2000]


def _neg_vendor_ids(rng: random.Random) -> str:
    """Identifiers that carry a vendor's prefix but grant nothing."""
    return _pick(
        rng,
        [
            f"Stripe customer cus_{_s(rng, ALNUM, 14)}",
            f"payment intent pi_3{_s(rng, ALNUM, 23)}",
            f"price_1{_s(rng, ALNUM, 23)}",
            f"Stripe account acct_1{_s(rng, ALNUM, 15)}",
            f"webhook event evt_1{_s(rng, ALNUM, 23)}",
            f"subscription sub_1{_s(rng, ALNUM, 23)}",
            f"Twilio account SID AC{_s(rng, HEX, 32)}",
            f"Twilio message SM{_s(rng, HEX, 32)}",
            f"phone number PN{_s(rng, HEX, 32)}",
            f"OpenAI org org-{_s(rng, ALNUM, 24)}",
            f"OpenAI project proj_{_s(rng, ALNUM, 24)}",
            f"completion chatcmpl-{_s(rng, ALNUM, 29)}",
            f"assistant asst_{_s(rng, ALNUM, 24)}",
            f"Anthropic message msg_01{_s(rng, ALNUM, 22)}",
            f"file-{_s(rng, ALNUM, 24)}",
            f"Slack channel C0{_s(rng, UPPER_ALNUM, 9)}, user U0{_s(rng, UPPER_ALNUM, 9)}",
            f"Discord channel {rng.randint(10**17, 10**18)}",
            f"discord.gg/{_s(rng, ALNUM, 8)}",
            f"Telegram chat id -100{rng.randint(10**9, 10**10)}",
            f"t.me/{rng.choice(WORDS)}_bot",
            f"GitHub node_id: {_b64(f'04:User{rng.randint(1, 10**8)}'.encode())}",
            f"gid://shopify/Product/{rng.randint(10**9, 10**13)}",
            f"HF model meta-llama/Llama-3-{rng.choice([8, 70])}B-Instruct",
            f"Google OAuth client {rng.randint(10**11, 10**12)}-{_s(rng, string.ascii_lowercase + string.digits, 32)}.apps.googleusercontent.com",
            f"Heroku app {rng.choice(WORDS)}-{rng.choice(WORDS)}-{rng.randint(10000, 99999)}",
            f"droplet {rng.randint(10**8, 10**9)}",
            f"npm package @{rng.choice(WORDS)}/{rng.choice(WORDS)}@{rng.randint(1, 9)}.{rng.randint(0, 20)}.0",
            f"Sentry issue {rng.choice(WORDS).upper()}-{rng.randint(1, 9999)}",
            f"Mailgun domain mg.{rng.choice(WORDS)}.example.com",
            f"SendGrid template d-{_s(rng, HEX, 32)}",
            f"Azure tenant {_uuid(rng)}",
            f"GCP project {rng.choice(WORDS)}-{rng.randint(100000, 999999)}",
        ],
    )


NEGATIVES: dict[str, Callable[[random.Random], str]] = {
    "talk_about_secrets": _neg_talk,
    "prefix_talk": _neg_prefix_talk,
    "placeholders": _neg_placeholder,
    "env_reads": _neg_env_reads,
    "public_keys": _neg_public_keys,
    "certificates": _neg_certificates,
    "publishable_keys": _neg_publishable,
    "sentry_dsns": _neg_sentry,
    "digests": _neg_digests,
    "commit_shas": _neg_commit_shas,
    "uuids": _neg_uuids,
    "arns_and_account_ids": _neg_arns,
    "urls_without_password": _neg_urls,
    "emails_and_phones": _neg_contacts,
    "scripts_and_emoji": _neg_scripts,
    "memory_notes": _neg_notes,
    "benign_code": _neg_code,
    "vendor_ids": _neg_vendor_ids,
    "long_mixed_notes": _neg_long,
}


@cache
def positive_cases() -> tuple[Case, ...]:
    rng = random.Random(SEED)
    return tuple(case for shape in SHAPES for case in _positive_cases_for(shape, rng))


@cache
def negative_cases() -> tuple[Case, ...]:
    rng = random.Random(SEED + 1)
    return tuple(
        Case(category, category, make(rng)) for category, make in NEGATIVES.items() for _ in range(PER_CATEGORY)
    )


def positives() -> list[tuple[str, str]]:
    """(shape, text) for every credential in the corpus."""
    return [(c.label, c.text) for c in positive_cases()]


def negatives() -> list[tuple[str, str]]:
    """(benign category, text) for every harmless note in the corpus."""
    return [(c.label, c.text) for c in negative_cases()]
