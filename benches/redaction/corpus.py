#!/usr/bin/env python3
"""Writes the redaction corpus into the folder given as argv[1], with manifest.json.

- secrets/: one small file per case, holding one fake credential in a real format and a
  realistic context (a config file, an .npmrc, a curl line, a .git/config, a PEM block, ...);
- lookalikes/: one file per case holding text that resembles a credential and is not one
  (git SHAs, UUIDs, digests, environment lookups, placeholders, public keys, the AWS
  documentation's example keys, ...).

Every value is made here from a seeded random source: fake, never a real credential. The token
prefixes are put together from pieces, so that this file holds no literal token for a secret
scanner to flag. The manifest lists, for each file, its kind, family, the secret values it holds
and the line they are on.
"""

import base64
import json
import os
import random
import shutil
import string
import sys
import uuid

UPPER, LOWER, DIGITS = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UPPER + LOWER + DIGITS
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
B32 = UPPER + "234567"
HEX = "0123456789abcdef"

AKIA, ASIA = "AK" + "IA", "AS" + "IA"
GH = "g" + "h"
GHPAT = "github" + "_pat_"
GLPAT = "gl" + "pat-"
XOX = "xo" + "x"
HOOK = "https://hooks." + "slack.com/services/"
SK_LIVE, RK_LIVE = "sk" + "_live_", "rk" + "_live_"
NPM = "np" + "m_"
PYPI = "py" + "pi-" + "AgEIcHl" + "waS5vcmc"
AIZA = "AI" + "za"
SKPROJ = "sk-" + "proj-"
OPENAI_MID = "T3Blbk" + "FJ"
SKANT = "sk-" + "ant-" + "api03-"
PRIV = "PRIV" + "ATE KEY"
PER_CONTEXT = 12


def rs(rand, n, chars=ALNUM):
    """n random characters; with two letters and two digits at least when chars has both."""
    mixed = n >= 8 and any(c.isdigit() for c in chars) and any(c.isalpha() for c in chars)
    while True:
        s = "".join(rand.choice(chars) for _ in range(n))
        if not mixed or (sum(c.isdigit() for c in s) >= 2 and sum(c.isalpha() for c in s) >= 2):
            return s


def camel_case(rand, n):
    """A name of n letters in camel case, as code writes identifiers and placeholders."""
    words = ["aws", "secret", "access", "key", "from", "vault", "environment", "value", "stored",
             "path", "default", "config", "replace", "with", "your", "own", "resolved", "file"]
    name = ""
    while len(name) < n:
        word = rand.choice(words)
        name += word.capitalize() if name else word
    return name[:n]


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def jwt(rand):
    head = b64url(json.dumps({"alg": rand.choice(["HS256", "RS256"]), "typ": "JWT"}).encode())
    body = b64url(json.dumps({"sub": rs(rand, 10), "iat": rand.randrange(1_600_000_000, 1_900_000_000),
                              "scope": "read write"}).encode())
    return f"{head}.{body}.{b64url(rand.randbytes(rand.choice([32, 256])))}"


def pem_body(rand, nbytes, width):
    body = base64.b64encode(rand.randbytes(nbytes)).decode()
    return [body[i:i + width] for i in range(0, len(body), width)]


# (family, context name, make(rand) -> (text, [values], line of the first value)).
def one_line(template):
    """A context of one line: template with {v} where the value goes."""
    def build(value):
        text = "# generated settings\n" + template.format(v=value) + "\nregion = eu-west-1\n"
        return text, 2
    return build


POSITIVES = [
    ("aws-access-key-id", "ini", lambda r: AKIA + rs(r, 16, B32), one_line("aws_access_key_id = {v}")),
    ("aws-access-key-id", "env", lambda r: AKIA + rs(r, 16, B32), one_line("AWS_ACCESS_KEY_ID={v}")),
    ("aws-access-key-id", "json", lambda r: ASIA + rs(r, 16, B32), one_line('  "AccessKeyId": "{v}",')),
    ("aws-secret-access-key", "ini", lambda r: rs(r, 40, B64), one_line("aws_secret_access_key = {v}")),
    ("aws-secret-access-key", "env", lambda r: rs(r, 40, B64), one_line('export AWS_SECRET_ACCESS_KEY="{v}"')),
    ("aws-secret-access-key", "json", lambda r: rs(r, 40, B64), one_line('  "SecretAccessKey": "{v}",')),
    ("aws-secret-access-key", "terraform", lambda r: rs(r, 40, B64), one_line('  secret_key = "{v}"')),
    ("aws-secret-access-key", "cli", lambda r: rs(r, 40, B64), one_line("aws configure set aws_secret_access_key {v}")),
    ("aws-secret-access-key", "json-in-string", lambda r: rs(r, 40, B64),
     one_line('  "body": "{{\\"SecretAccessKey\\": \\"{v}\\"}}",')),
    ("aws-secret-access-key", "ecs-json", lambda r: rs(r, 40, B64),
     one_line('      {{"name": "AWS_SECRET_ACCESS_KEY", "value": "{v}"}},')),
    ("aws-secret-access-key", "sts-xml", lambda r: rs(r, 40, B64),
     one_line("      <SecretAccessKey>{v}</SecretAccessKey>")),
    # The IAM console's CSV file: the key after its access key id, under a header line.
    ("aws-secret-access-key", "iam-csv", lambda r: rs(r, 40, B64),
     lambda v: (f"Access key ID,Secret access key\n{AKIA}Q2RSTUVWXY234567,{v}\n", 2)),
    ("github-token", "yaml", lambda r: GH + "p_" + rs(r, 36), one_line("github_token: {v}")),
    ("github-token", "env", lambda r: GH + "s_" + rs(r, 36), one_line("GITHUB_TOKEN={v}")),
    ("github-token", "oauth", lambda r: GH + "o_" + rs(r, 36), one_line('token = "{v}"')),
    # GitHub's older form of a token in a remote's URL: the token is the user name.
    ("github-token", "url-user", lambda r: GH + "p_" + rs(r, 36),
     one_line("url = https://{v}:x-oauth-basic@github.com/org/app.git")),
    ("github-fine-grained-token", "yaml", lambda r: GHPAT + rs(r, 22) + "_" + rs(r, 59),
     one_line('ci_token: "{v}"')),
    ("gitlab-token", "env", lambda r: GLPAT + rs(r, 20, URLSAFE), one_line("GITLAB_TOKEN={v}")),
    ("slack-token", "bot", lambda r: XOX + "b-" + rs(r, 12, DIGITS) + "-" + rs(r, 13, DIGITS) + "-" + rs(r, 24),
     one_line("slack_bot_token: '{v}'")),
    ("slack-token", "user", lambda r: XOX + "p-" + "-".join(rs(r, 12, DIGITS) for _ in range(3)) + "-" + rs(r, 32, HEX),
     one_line("SLACK_USER_TOKEN={v}")),
    ("slack-webhook", "url", lambda r: f"T{rs(r, 8, B32)}/B{rs(r, 10, B32)}/{rs(r, 24)}",
     one_line("webhook: " + HOOK + "{v}")),
    ("stripe-key", "secret", lambda r: SK_LIVE + rs(r, 24), one_line('stripe_secret_key = "{v}"')),
    ("stripe-key", "restricted", lambda r: RK_LIVE + rs(r, 99), one_line("STRIPE_KEY={v}")),
    ("npm-token", "npmrc", lambda r: NPM + rs(r, 36), one_line("//registry.example.com/:_authToken={v}")),
    ("pypi-token", "pypirc", lambda r: PYPI + rs(r, 120, URLSAFE), one_line("password = {v}")),
    ("google-api-key", "yaml", lambda r: AIZA + rs(r, 35, URLSAFE), one_line("maps_api_key: {v}")),
    ("google-api-key", "url", lambda r: AIZA + rs(r, 35, URLSAFE),
     one_line("url: https://maps.example.com/api/js?key={v}&callback=init")),
    ("openai-api-key", "project", lambda r: SKPROJ + rs(r, 74, URLSAFE) + OPENAI_MID + rs(r, 74, URLSAFE),
     one_line("OPENAI_API_KEY={v}")),
    ("openai-api-key", "legacy", lambda r: "sk-" + rs(r, 20) + OPENAI_MID + rs(r, 20),
     one_line("openai.api_key = '{v}'")),
    ("anthropic-api-key", "env", lambda r: SKANT + rs(r, 93, URLSAFE) + "AA", one_line("ANTHROPIC_API_KEY={v}")),
    ("jwt", "yaml", jwt, one_line("session_token: {v}")),
    ("jwt", "bearer", jwt, one_line('curl -H "Authorization: Bearer {v}" https://api.example.com/')),
    ("url-password", "https", lambda r: rs(r, 18), one_line("repo_url: https://deploy:{v}@git.example.com/org/app.git")),
    ("url-password", "postgres", lambda r: rs(r, 16), one_line("DATABASE_URL=postgres://app:{v}@db.internal:5432/app")),
    ("url-password", "mongodb", lambda r: rs(r, 20, ALNUM + "!*-_"),
     one_line('MONGO_URI="mongodb+srv://svc:{v}@cluster0.example.net/db"')),
    ("authorization", "bearer", lambda r: rs(r, 40), one_line('curl -H "Authorization: Bearer {v}" https://api.example.com/v1/me')),
    ("authorization", "git-extraheader",
     lambda r: base64.b64encode(f"x-access-token:{GH}s_{rs(r, 36)}".encode()).decode(),
     lambda v: (f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {v}\n', 2)),
    ("authorization", "json", lambda r: rs(r, 32), one_line('  "Authorization": "token {v}",')),
    ("authorization", "har", lambda r: rs(r, 40),
     one_line('          {{"name": "authorization", "value": "Bearer {v}"}},')),
    ("authorization", "code", lambda r: rs(r, 40), one_line('    req.Header.Set("Authorization", "Bearer {v}")')),
    # Name/value pairs over two lines: Kubernetes' env and a probe's header, a pretty-printed HAR.
    ("aws-secret-access-key", "k8s-env", lambda r: rs(r, 40, B64),
     lambda v: (f'env:\n  - name: AWS_SECRET_ACCESS_KEY\n    value: "{v}"\n', 3)),
    ("aws-secret-access-key", "tfstate", lambda r: rs(r, 40, B64), one_line('            "secret": "{v}",')),
    ("aws-secret-access-key", "k8s-secret", lambda r: base64.b64encode(rs(r, 40, B64).encode()).decode(),
     lambda v: (f"kind: Secret\ndata:\n  aws_secret_access_key: {v}\n", 3)),
    ("authorization", "k8s-probe", lambda r: rs(r, 40),
     lambda v: (f"httpHeaders:\n  - name: Authorization\n    value: Bearer {v}\n", 3)),
    ("authorization", "har-pretty", lambda r: rs(r, 40),
     lambda v: (f'  {{\n    "name": "Authorization",\n    "value": "Bearer {v}"\n  }},\n', 3)),
    # Tokens right after an escape: a JSON log line, a captured request, a URL in a URL's query.
    ("aws-access-key-id", "json-log", lambda r: AKIA + rs(r, 16, B32),
     one_line('{{"level": "info", "msg": "keys:\\n{v}\\n"}}')),
    ("authorization", "http-dump", lambda r: rs(r, 40),
     one_line('{{"request": "GET /v1/me HTTP/1.1\\r\\nAuthorization: Bearer {v}\\r\\n"}}')),
    ("github-token", "url-in-query", lambda r: GH + "p_" + rs(r, 36),
     one_line("next: https://sso.example.com/login?to=%2Fapi%3Ftoken%3D{v}")),
    ("github-token", "ci-log-colour", lambda r: GH + "p_" + rs(r, 36),
     one_line("+ export GH_TOKEN=\x1b[32m{v}\x1b[0m")),
    # URL passwords that start as templates do but are not one, hosts that start with `_`, `%`,
    # `.` or a letter beyond ASCII, a password longer than 256 bytes, a user of up to 256.
    ("url-password", "sigil-start", lambda r: sigil_password(r),
     one_line("DATABASE_URL=postgres://admin:{v}@db.internal:5432/app")),
    ("url-password", "printf-start", lambda r: "%s" + rs(r, 14),
     one_line("url = mysql://app:{v}@db.internal/app")),
    ("url-password", "host-underscore", lambda r: rs(r, 16),
     one_line("DATABASE_URL=postgres://app:{v}@_db.internal:5432/app")),
    ("url-password", "host-percent", lambda r: rs(r, 16),
     one_line("broker: amqp://svc:{v}@%64b.internal:5672/")),
    ("url-password", "host-dot", lambda r: rs(r, 16),
     one_line("redis_url: redis://cache:{v}@.internal:6379/0")),
    ("url-password", "host-non-ascii", lambda r: rs(r, 16),
     one_line("repo: https://deploy:{v}@\u00fcber.example/org/app.git")),
    ("url-password", "long-password", lambda r: rs(r, r.randrange(257, 1200), ALNUM + "!*-_"),
     one_line("DATABASE_URL=postgres://app:{v}@db.internal:5432/app")),
    ("url-password", "long-user", lambda r: rs(r, 20),
     lambda v: one_line("url = https://" + rs(random.Random(v), 240, LOWER + DIGITS) + ":{v}@example.com/")(v)),
    # Authorization values in quotes, in a JavaScript template literal, joined from two string
    # literals, and on a folded header line (the scheme word on either line).
    ("authorization", "yaml-quoted", lambda r: rs(r, 40), one_line('    Authorization: "Bearer {v}"')),
    ("authorization", "template-literal", lambda r: rs(r, 40),
     one_line("fetch(url, {{ headers: {{ Authorization: `Bearer {v}` }} }})")),
    ("authorization", "joined-literals", lambda r: rs(r, 40),
     one_line('xhr.headers.Authorization = "Bearer " + "{v}";')),
    ("authorization", "joined-literals-js", lambda r: rs(r, 40),
     one_line("const headers = {{ 'Authorization': 'Bearer ' + '{v}' }};")),
    ("authorization", "folded", lambda r: rs(r, 40),
     lambda v: (f"GET /v1/me HTTP/1.1\nHost: api.example.com\nAuthorization:\n  Bearer {v}\n", 4)),
    ("authorization", "folded-after-scheme", lambda r: rs(r, 40),
     lambda v: (f"GET /v1/me HTTP/1.1\nProxy-Authorization: Bearer\n\t{v}\n", 3)),
    # Secrets that no readbox rule describes (readbox knows formats, not every secret): a
    # password under a password key, a hex API key under an api_key key, a SendGrid key.
    ("outside: password value", "yaml", lambda r: rs(r, 16, ALNUM + "!@#%"), one_line('  password: "{v}"')),
    ("outside: hex api key", "ini", lambda r: rs(r, 32, HEX), one_line("api_key = {v}")),
    ("outside: sendgrid key", "env", lambda r: "SG." + rs(r, 22, URLSAFE) + "." + rs(r, 43, URLSAFE),
     one_line("SENDGRID_API_KEY={v}")),
]


def sigil_password(rand):
    """A password that starts with `$`, `(`, `[` or `{` and is no template: it holds digits and
    lower-case letters, and a bracket, when it has one, may close it."""
    body = rs(rand, 1, LOWER) + rs(rand, 15)
    return rand.choice(["$" + body, "(" + body + ")", "[" + body + "]", "{" + body, "{" + body + "}"])


def key_block_case(rand, label, nbytes, width, indent, pre, post):
    body = pem_body(rand, nbytes, width)
    text = "".join(p + "\n" for p in pre) + f"{indent}-----BEGIN {label}-----\n"
    text += "".join(f"{indent}{b}\n" for b in body) + f"{indent}-----END {label}-----\n"
    text += "".join(p + "\n" for p in post)
    return text, body, len(pre) + 1


def key_cases(rand):
    """Private keys: PEM blocks of several kinds, one indented in YAML, one inline in JSON."""
    out = []
    for _ in range(PER_CONTEXT):
        for ctx, label, nbytes, width, indent, pre in [
            ("rsa", "RSA " + PRIV, 1190, 64, "", ["# deploy key"]),
            ("pkcs8", PRIV, 1216, 64, "", []),
            ("ec", "EC " + PRIV, 121, 64, "", []),
            ("openssh-yaml", "OPENSSH " + PRIV, 400, 70, "  ", ["ssh_key: |"]),
        ]:
            text, body, line = key_block_case(rand, label, nbytes, width, indent, pre, ["# end"])
            out.append(("private-key", ctx, text, body, line))
        # A key in code, one string literal per line (Go, Java, JavaScript).
        body = pem_body(rand, 1190, 64)
        text = (f'const testKey = "-----BEGIN RSA {PRIV}-----\\n" +\n'
                + "".join(f'\t"{b}\\n" +\n' for b in body) + f'\t"-----END RSA {PRIV}-----\\n"\n')
        out.append(("private-key", "go-literals", text, body, 2))
        body = base64.b64encode(rand.randbytes(1216)).decode()
        lines = [body[i:i + 64] for i in range(0, len(body), 64)]
        escaped = "\\n".join(lines)
        text = ('{\n  "type": "service_account",\n  "private_key_id": "' + rs(rand, 40, HEX) + '",\n'
                f'  "private_key": "-----BEGIN {PRIV}-----\\n{escaped}\\n-----END {PRIV}-----\\n",\n'
                '  "client_email": "svc@project.iam.example.com"\n}\n')
        out.append(("private-key", "json-inline", text, lines, 4))
        # The same service account as a string inside JSON: its line breaks escaped twice.
        twice = "\\\\n".join(lines)
        text = ('{"kind": "Secret", "last-applied": "{\\"private_key\\": \\"'
                f'-----BEGIN {PRIV}-----\\\\n{twice}\\\\n-----END {PRIV}-----\\\\n\\"}}"}}\n')
        out.append(("private-key", "json-in-json", text, lines, 1))
    return out


TYPES = ["OAuth2Credentials", "OAuth2Token", "Sha256Digest", "Base64String", "Oauth2Header",
         "Credentials2", "HeaderValueV2"]


def header_constants(rand):
    consts = ["WINBIO_PRESENCE_0", "SECPKG_ATTR_AUTHORITY_2", "HTTP_AUTH_SCHEME_V2",
              "KERB_LOGON_S4U_1", "SEC_WINNT_AUTH_IDENTITY_2", "RPC_C_AUTHN_LEVEL_6"]
    a, b, c = rand.sample(consts, 3)
    return (f"pub struct WINBIO_PRESENCE_PROPERTIES {{\n    pub Authorization: {a},\n"
            f"    pub Authentication: {b},\n}}\n"
            f"pub enum Header {{ Authorization: {c}, Accept: ACCEPT_V1 }}\n"
            f"typedef enum {{ Authorization = {rand.randrange(1, 99)}, ProxyAuthorization }} HEADER;\n"
            "class Headers(TypedDict):\n    Authorization: NotRequired[str]\n")


def sigv4(rand):
    """SigV4 Authorization headers with the AWS documentation's key id, with a signature and
    without one (the scheme's text in a template)."""
    date = f"2026{rand.randrange(1, 13):02d}{rand.randrange(1, 29):02d}"
    scope = f"AKIDEXAMPLE/{date}/us-east-1/iam/aws4_request"
    return (f"Authorization: AWS4-HMAC-SHA256 Credential={scope}, "
            f"SignedHeaders=content-type;host;x-amz-date, Signature={rand.randbytes(32).hex()}\n"
            f'  "Authorization": "AWS4-HMAC-SHA256 Credential={scope}, SignedHeaders=host",\n'
            "authorization: AWS4-HMAC-SHA256 Credential=\n")


def lookalikes(rand):
    """(category, text) of files that hold no credential."""
    pub = pem_body(rand, 294, 64)
    cert = pem_body(rand, 900, 64)
    ed = base64.b64encode(b"\0\0\0\x0bssh-ed25519\0\0\0\x20" + rand.randbytes(32)).decode()
    cases = [
        ("git-sha", lambda: f"commit {rand.randbytes(20).hex()}\nparent = {rand.randbytes(20).hex()}\n"),
        ("uuid", lambda: f"request_id = {uuid.UUID(int=rand.getrandbits(128), version=4)}\n"),
        ("sha256-digest", lambda: f"image: docker.io/library/alpine@sha256:{rand.randbytes(32).hex()}\n"),
        ("npm-integrity", lambda: f'"integrity": "sha512-{base64.b64encode(rand.randbytes(64)).decode()}",\n'),
        ("env-lookup", lambda: 'password = os.environ["DB_PASSWORD"]\n'
                               'aws_secret_access_key = os.getenv("AWS_SECRET_ACCESS_KEY")\n'),
        ("template", lambda: "DATABASE_URL=postgres://app:${DB_PASSWORD}@db/app\n"
                             "token: {{ .Values.github.token }}\n"),
        ("placeholder", lambda: "Authorization: Bearer YOUR_TOKEN_HERE\n"
                                "curl -H \"Authorization: Bearer $TOKEN\" https://api.example.com\n"),
        ("value-from-elsewhere", lambda: "  - name: AWS_SECRET_ACCESS_KEY\n    valueFrom:\n"
                                         "      secretKeyRef: {name: aws, key: secret}\n"
                                         "  - name: Authorization\n    value: Bearer $(API_TOKEN)\n"),
        ("bearer-word", lambda: "# Clients send the API token as a Bearer token.\nauth_scheme: Bearer\n"),
        ("aws-doc-example", lambda: f"aws_access_key_id = {AKIA}IOSFODNN7EXAMPLE\n"
                                    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY\n"),
        ("short-prefix", lambda: f"aws_example = {AKIA}EXAMPLE\ncountry = SLOV{AKIA[2:]}\n"),
        ("url-no-password", lambda: "homepage: https://example.com:8443/docs\n"
                                    "clone: ssh://git@github.com/org/repo.git\n"
                                    "mirror: https://mirror-user@example.com/repo.git\n"),
        ("prose-prefixes", lambda: f"# GitHub classic tokens start with {GH}p_ and Slack bot tokens with {XOX}b-.\n"),
        ("base64-payload", lambda: f"payload: {b64url(json.dumps({'key': 'value', 'n': rand.randrange(99)}).encode())}\n"),
        ("public-key", lambda: "-----BEGIN PUBLIC KEY-----\n" + "".join(b + "\n" for b in pub)
                               + "-----END PUBLIC KEY-----\n"),
        ("certificate", lambda: "-----BEGIN CERTIFICATE-----\n" + "".join(b + "\n" for b in cert)
                                + "-----END CERTIFICATE-----\n"),
        ("ssh-public-key", lambda: f"ssh-ed25519 {ed} dev@laptop\n"),
        ("md5", lambda: f"checksum: {rand.randbytes(16).hex()}\n"),
        ("identifier", lambda: f"const {rs(rand, 1, UPPER)}{rs(rand, 30, UPPER + '_')} = {rand.randrange(10**9)}\n"),
        ("random-id", lambda: f'"id": "{rs(rand, 24, LOWER + DIGITS)}",\n'),
        ("camel-case-name", lambda: f"aws_secret_access_key = {camel_case(rand, 40)}\n"),
        # A word in the shape of an AWS key id: readbox replaces it (a known false positive).
        ("aws-shaped-word", lambda: f"region: {ASIA}PACIFICSOUTHEAST\n"),
        ("marker-constant", lambda: f'MARKERS = {{\n    "rsa": "-----BEGIN RSA {PRIV}-----",\n}}\n\n'
                                    "def load(path):\n    return open(path).read()\n"),
        ("minified-property", lambda: "fetch(u,{headers:{Authorization:o1.accessToken,Accept:a}})\n"),
        # URL passwords that are templates as a whole, in the other forms they take.
        ("url-template-forms", lambda: "a = postgres://app:$DB_PASSWORD@db/app\n"
                                       "b = postgres://app:{password}@db/app\n"
                                       "c = postgres://app:{{ db_password }}@db/app\n"
                                       "d = postgres://app:%(password)s@db/app\n"
                                       'e = "mysql://%s:%s@%s/%s"\n'
                                       "f = postgres://app:[DB_PASS]@db/app\n"
                                       "g = postgres://app:$(DB_PASS)@db/app\n"),
        # An Authorization value from a variable or an interpolation, and a folded header
        # whose next line is prose or a placeholder.
        ("authorization-from-code", lambda: 'headers.Authorization = "Bearer " + accessToken;\n'
                                            "fetch(u, { headers: { Authorization: `Bearer ${token}` } })\n"
                                            "req.headers['Authorization'] = 'Bearer ' + getToken(user2);\n"),
        ("authorization-folded-prose", lambda: "Authorization:\n  required for every call\n"
                                               "Authorization: Bearer\n  YOUR_TOKEN_HERE\n"),
        # Constants in code named after header words: a Rust struct's field or enum's
        # variant, a C enum, a typed Python field.
        ("header-word-constant", lambda: header_constants(rand)),
        # AWS Signature Version 4's scheme: it names a key id and signs one request.
        ("sigv4-scheme", lambda: sigv4(rand)),
        # SigV4a, its variant signed with ECDSA: readbox replaces its scheme name (a known
        # false positive).
        ("sigv4a-scheme", lambda: "Authorization: AWS4-ECDSA-P256-SHA256 Credential=AKIDEXAMPLE/"
                                  f"2026{rand.randrange(1, 13):02d}01/us-east-1/s3/aws4_request, "
                                  "SignedHeaders=host;x-amz-region-set\n"),
        # A field typed with a type whose name holds a digit (Rust, TypeScript): readbox
        # replaces the type's name (a known false positive).
        ("typed-header-field", lambda: f"    pub authorization: {rand.choice(TYPES)},\n"
                                       f"  authorization: {rand.choice(TYPES)};\n"),
        ("data-uri", lambda: f"icon: data:image/png;base64,{base64.b64encode(rand.randbytes(60)).decode()}\n"),
    ]
    return [(cat, make()) for cat, make in cases for _ in range(PER_CONTEXT)]


def main():
    out = sys.argv[1]
    rand = random.Random(int(os.environ.get("REDACTION_SEED", "20261130")))
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "secrets"))
    os.makedirs(os.path.join(out, "lookalikes"))
    manifest = []
    n = 0
    for family, ctx, make, build in POSITIVES:
        for _ in range(PER_CONTEXT):
            value = make(rand)
            text, line = build(value)
            manifest.append({"file": f"secrets/{n:04d}.txt", "kind": "secret", "family": family,
                             "context": ctx, "values": [value], "line": line})
            with open(os.path.join(out, "secrets", f"{n:04d}.txt"), "w", encoding="utf-8") as f:
                f.write(text)
            n += 1
    for family, ctx, text, values, line in key_cases(rand):
        manifest.append({"file": f"secrets/{n:04d}.txt", "kind": "secret", "family": family,
                         "context": ctx, "values": values, "line": line})
        with open(os.path.join(out, "secrets", f"{n:04d}.txt"), "w", encoding="utf-8") as f:
            f.write(text)
        n += 1
    for i, (cat, text) in enumerate(lookalikes(rand)):
        manifest.append({"file": f"lookalikes/{i:04d}.txt", "kind": "lookalike", "family": cat})
        with open(os.path.join(out, "lookalikes", f"{i:04d}.txt"), "w", encoding="utf-8") as f:
            f.write(text)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"corpus: {n} files with a secret, {len(manifest) - n} look-alikes", file=sys.stderr)


if __name__ == "__main__":
    main()
