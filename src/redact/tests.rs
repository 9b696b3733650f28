//! The detector's tests. Every secret here is made at run time: fake values in the real
//! formats, with their prefixes put together from pieces (`concat!("gh", "p_")`), so that the
//! repository holds no string a secret scanner would flag.

use super::pairs::NAME_MAX;
use super::scan::regex;
use super::*;

const AKIA: &str = concat!("AK", "IA");
const ASIA: &str = concat!("AS", "IA");
const GHP: &str = concat!("gh", "p_");
const GHS: &str = concat!("gh", "s_");
const GHPAT: &str = concat!("github", "_pat_");
const GLPAT: &str = concat!("gl", "pat-");
const XOXB: &str = concat!("xo", "xb-");
const XAPP: &str = concat!("xa", "pp-");
const HOOK: &str = concat!("https://hooks.", "slack.com/services/");
const SKLIVE: &str = concat!("sk", "_live_");
const RKTEST: &str = concat!("rk", "_test_");
const NPM: &str = concat!("np", "m_");
const PYPI: &str = concat!("py", "pi-", "AgEIcHl", "waS5vcmc");
const AIZA: &str = concat!("AI", "za");
const SKPROJ: &str = concat!("sk-", "proj-");
const OPENAI_MID: &str = concat!("T3Blbk", "FJ");
const SKANT: &str = concat!("sk-", "ant-", "api03-");
const PRIV: &str = concat!("PRIV", "ATE KEY");

const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
const DIGITS: &str = "0123456789";

fn alnum() -> String {
    format!("{UPPER}{LOWER}{DIGITS}")
}
fn b64() -> String {
    alnum() + "+/"
}
fn urlsafe() -> String {
    alnum() + "_-"
}
fn b32() -> String {
    format!("{UPPER}234567")
}

/// A small deterministic generator (xorshift64*), seeded per test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// `n` characters of `chars`, with at least two letters and two digits when `chars` has
    /// both (as real tokens do, and as the rules that look for randomness expect).
    fn pick(&mut self, n: usize, chars: &str) -> String {
        let c = chars.as_bytes();
        let mixed = n >= 8 && mixed(c);
        loop {
            let s: Vec<u8> = (0..n)
                .map(|_| c[(self.next() % c.len() as u64) as usize])
                .collect();
            let digits = s.iter().filter(|b| b.is_ascii_digit()).count();
            let letters = s.iter().filter(|b| b.is_ascii_alphabetic()).count();
            if !mixed || (digits >= 2 && letters >= 2) {
                return String::from_utf8(s).unwrap();
            }
        }
    }
}

fn mixed(s: &[u8]) -> bool {
    s.iter().any(u8::is_ascii_digit) && s.iter().any(u8::is_ascii_alphabetic)
}

/// A random AWS secret key of 40 characters, holding a `/` and a `+` written as `slash` and
/// `plus` (escaped, or percent-encoded).
fn aws_secret_written(r: &mut Rng, slash: &str, plus: &str) -> String {
    let (a, b, c) = (
        r.pick(20, &alnum()),
        r.pick(10, &alnum()),
        r.pick(8, &alnum()),
    );
    format!("{a}{slash}{b}{plus}{c}")
}

fn base64_of(bytes: &[u8], url: bool) -> String {
    const STD: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.len();
        let v = chunk
            .iter()
            .enumerate()
            .fold(0u32, |v, (i, &b)| v | u32::from(b) << (16 - 8 * i));
        for i in 0..=n {
            let mut c = STD[(v >> (18 - 6 * i) & 63) as usize];
            if url {
                c = match c {
                    b'+' => b'-',
                    b'/' => b'_',
                    c => c,
                };
            }
            out.push(c as char);
        }
        if !url {
            out.push_str(&"=="[..3 - n]);
        }
    }
    out
}

fn fake_jwt(rng: &mut Rng) -> String {
    let head = base64_of(br#"{"alg":"HS256","typ":"JWT"}"#, true);
    let body = format!(
        r#"{{"sub":"{}","iat":{}}}"#,
        rng.pick(12, &alnum()),
        1_700_000_000 + rng.next() % 1000
    );
    let sig: Vec<u8> = (0..32).map(|_| rng.next() as u8).collect();
    format!(
        "{head}.{}.{}",
        base64_of(body.as_bytes(), true),
        base64_of(&sig, true)
    )
}

/// The text of `input` as a stream redacts it, line by line.
fn redact(input: &str) -> String {
    redact_with(&mut Redactor::new(), input).0
}

fn redact_with(r: &mut Redactor, input: &str) -> (String, Tally) {
    let mut out = Vec::new();
    for line in input.as_bytes().split_inclusive(|&b| b == b'\n') {
        match r.line(line) {
            Shown::Same => out.extend_from_slice(line),
            Shown::Replaced(v) => out.extend_from_slice(&v),
            Shown::Hidden => {}
        }
    }
    (String::from_utf8(out).unwrap(), r.tally().clone())
}

fn mark(id: &str) -> String {
    format!("[REDACTED:{id}]")
}

/// A line with a secret: shown as `before` + the marker + `after`.
struct Pos {
    before: String,
    secret: String,
    after: String,
}

fn pos(before: impl Into<String>, secret: impl Into<String>, after: impl Into<String>) -> Pos {
    Pos {
        before: before.into(),
        secret: secret.into(),
        after: after.into(),
    }
}

/// Per rule: lines whose secret it replaces, and look-alikes that stay as they are.
fn examples(rng: &mut Rng) -> Vec<(&'static str, Vec<Pos>, Vec<String>)> {
    let r = rng;
    let hex40: String = r.pick(40, "0123456789abcdef");
    vec![
        (
            "aws-access-key-id",
            vec![
                pos(
                    "aws_access_key_id = ",
                    format!("{AKIA}{}", r.pick(16, &b32())),
                    "\n",
                ),
                pos(
                    "\"AccessKeyId\": \"",
                    format!("{ASIA}{}", r.pick(16, &b32())),
                    "\",\n",
                ),
            ],
            vec![
                format!("aws_example = {AKIA}EXAMPLE\n"),
                format!("documented = {AKIA}IOSFODNN7EXAMPLE\n"),
                "country = SLOVAKIA\n".into(),
                format!("id = {AKIA}{}\n", r.pick(16, LOWER)),
            ],
        ),
        (
            "aws-secret-access-key",
            vec![
                pos("aws_secret_access_key = ", r.pick(40, &b64()), "\n"),
                pos(
                    "export AWS_SECRET_ACCESS_KEY=\"",
                    r.pick(40, &b64()),
                    "\"\n",
                ),
                pos("      \"SecretAccessKey\": \"", r.pick(40, &b64()), "\",\n"),
                pos("  secretAccessKey: '", r.pick(40, &b64()), "'\n"),
                // As the AWS command line takes it, aligned YAML, and JSON inside a string.
                pos(
                    "aws --aws-secret-access-key ",
                    r.pick(40, &b64()),
                    " s3 ls\n",
                ),
                pos(
                    "aws configure set aws_secret_access_key ",
                    r.pick(40, &b64()),
                    "\n",
                ),
                pos(
                    "      AWS_SECRET_ACCESS_KEY:            ",
                    r.pick(40, &b64()),
                    "\n",
                ),
                pos(
                    "{\\\"SecretAccessKey\\\":\\\"",
                    r.pick(40, &b64()),
                    "\\\"}\n",
                ),
                // JSON that escapes `/` (PHP, org.json), and a URL's query string.
                pos(
                    "{\"SecretAccessKey\":\"",
                    aws_secret_written(r, "\\/", "+"),
                    "\"}\n",
                ),
                pos(
                    "https://example.com/upload?aws_secret_access_key=",
                    aws_secret_written(r, "%2F", "%2B"),
                    "&region=eu-west-1\n",
                ),
                // Named a secret key alone: Terraform's AWS provider, MinIO, Hadoop, .NET.
                pos("  secret_key = \"", r.pick(40, &b64()), "\"\n"),
                pos("MINIO_SECRET_KEY=", r.pick(40, &b64()), "\n"),
                pos("fs.s3a.secret.key=", r.pick(40, &b64()), "\n"),
                pos("    \"SecretKey\": \"", r.pick(40, &b64()), "\",\n"),
                // About one random key in a thousand has no digit.
                pos(
                    "aws_secret_access_key = ",
                    r.pick(40, &format!("{UPPER}{LOWER}")),
                    "\n",
                ),
                // Name/value pairs, as ECS task definitions, Kubernetes in JSON and
                // CloudFormation write them.
                pos(
                    "{\"name\":\"AWS_SECRET_ACCESS_KEY\",\"value\":\"",
                    r.pick(40, &b64()),
                    "\"}\n",
                ),
                pos(
                    "  - {name: AWS_SECRET_ACCESS_KEY, value: ",
                    r.pick(40, &b64()),
                    "}\n",
                ),
                pos(
                    "{ \"Name\": \"AWS_SECRET_ACCESS_KEY\", \"Value\": \"",
                    r.pick(40, &b64()),
                    "\" },\n",
                ),
                // Terraform's state of an aws_iam_access_key.
                pos(
                    "            \"secret\": \"",
                    r.pick(40, &b64()),
                    "\",\n",
                ),
                // An XML element, as STS answers.
                pos(
                    "<SecretAccessKey>",
                    r.pick(40, &b64()),
                    "</SecretAccessKey>\n",
                ),
            ],
            vec![
                "aws_secret_access_key = os.environ[\"AWS_SECRET_ACCESS_KEY\"]\n".into(),
                "secret_key = os.environ[\"SECRET_KEY\"]\n".into(),
                "secret_key_file = /run/secrets/MyServiceAwsSecretKeyFileVa\n".into(),
                format!("aws_secret_access_key = {}\n", r.pick(40, LOWER)),
                format!("aws_secret_access_key = {}\n", r.pick(40, UPPER)),
                // Identifiers and placeholders in camel case, 40 characters long.
                "aws_secret_access_key = ReplaceWithYourOwnAwsSecretAccessKeyNowV\n".into(),
                "set aws_secret_access_key ReplaceWithYourOwnAwsSecretAccessKeyNowV\n".into(),
                "\tAwsSecretAccessKey: awsSecretAccessKeyFromEnvironmentOrFileV,\n".into(),
                "AWS_SECRET_ACCESS_KEY_FILE=/run/secrets/MyServiceAwsSecretKeyFileVa\n".into(),
                // A value taken from elsewhere (an ECS secret from the parameter store).
                "{\"name\": \"AWS_SECRET_ACCESS_KEY\", \"valueFrom\": \"arn:aws:ssm:eu-west-1:123456789012:parameter/k\"}\n".into(),
                format!("aws_secret_access_key = {}\n", r.pick(41, &alnum())),
                // The word alone, before what is not a key.
                format!("            \"secret\": \"{}\",\n", r.pick(40, LOWER)),
                "    secret: true\n".into(),
                format!("client_secret_id = {}\n", r.pick(40, &b64())),
            ],
        ),
        (
            // After its access key id. AWS's documented example id, which stays, keeps these
            // lines to one secret each (`pair_of_aws_keys` has real-looking pairs).
            "aws-secret-access-key",
            vec![
                pos(format!("{AKIA}IOSFODNN7EXAMPLE,"), r.pick(40, &b64()), "\n"),
                pos(
                    format!("alice,,{AKIA}IOSFODNN7EXAMPLE,"),
                    r.pick(40, &b64()),
                    ",https://console.aws.amazon.com/\n",
                ),
                pos(format!("{AKIA}IOSFODNN7EXAMPLE "), r.pick(40, &b64()), "\n"),
                pos(
                    format!("creds = [\"{ASIA}EXAMPLE234567ABC\", \""),
                    r.pick(40, &b64()),
                    "\"]\n",
                ),
            ],
            vec![
                // A SHA-1, the documented example key, a longer token, a token in one case.
                format!("{AKIA}IOSFODNN7EXAMPLE,{hex40}\n"),
                format!(
                    "{AKIA}IOSFODNN7EXAMPLE,{}\n",
                    concat!("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY")
                ),
                format!("{AKIA}IOSFODNN7EXAMPLE,{}\n", r.pick(41, &b64())),
                format!(
                    "{AKIA}IOSFODNN7EXAMPLE {}\n",
                    r.pick(40, &format!("{UPPER}{DIGITS}"))
                ),
            ],
        ),
        (
            // A name/value pair over two lines.
            "aws-secret-access-key",
            vec![
                // Kubernetes' env, CloudFormation in YAML, an ECS task definition in JSON.
                pos(
                    "        - name: AWS_SECRET_ACCESS_KEY\n          value: ",
                    r.pick(40, &b64()),
                    "\n",
                ),
                // PHP's JSON escapes `/`.
                pos(
                    "  {\n    \"name\": \"AWS_SECRET_ACCESS_KEY\",\n    \"value\": \"",
                    format!("{}\\/{}", r.pick(20, &b64()), r.pick(19, &b64())),
                    "\"\n  }\n",
                ),
                pos(
                    "- name: MINIO_SECRET_KEY\n  value: ",
                    r.pick(40, &b64()),
                    "\n",
                ),
                // A YAML comment after the name.
                pos(
                    "- name: AWS_SECRET_ACCESS_KEY  # prod key\n  value: ",
                    r.pick(40, &b64()),
                    "\n",
                ),
                pos(
                    "  - Name: aws_secret_access_key\r\n    Value: \"",
                    r.pick(40, &b64()),
                    "\"\r\n",
                ),
                pos(
                    "        {\n          \"name\": \"AWS_SECRET_ACCESS_KEY\",\n          \"value\": \"",
                    r.pick(40, &b64()),
                    "\"\n        },\n",
                ),
            ],
            vec![
                // A value from elsewhere, placeholders, another name, a value that is not next.
                "- name: AWS_SECRET_ACCESS_KEY\n  valueFrom:\n    secretKeyRef:\n".into(),
                "- name: AWS_SECRET_ACCESS_KEY\n  value: ${AWS_SECRET_ACCESS_KEY}\n".into(),
                format!("- name: AWS_SECRET_ACCESS_KEY\n  value: {}\n", r.pick(40, UPPER)),
                format!("- name: AWS_REGION\n  value: {}\n", r.pick(40, &b64())),
                format!(
                    "- name: AWS_SECRET_ACCESS_KEY\n\n  value: {}\n",
                    r.pick(40, &b64())
                )
                .replace("\n\n", "\n  # set below\n"),
                format!("value: {}\n", r.pick(40, &b64())),
            ],
        ),
        (
            // In base64, as a Kubernetes Secret's data holds it.
            "aws-secret-access-key",
            vec![
                pos(
                    "  aws_secret_access_key: ",
                    base64_of(r.pick(40, &b64()).as_bytes(), false),
                    "\n",
                ),
                pos(
                    "  AWS_SECRET_ACCESS_KEY: \"",
                    base64_of(r.pick(40, &b64()).as_bytes(), false),
                    "\"\n",
                ),
                // As `echo KEY | base64` writes it, with the newline.
                pos(
                    "  aws_secret_access_key: ",
                    base64_of(format!("{}\n", r.pick(40, &b64())).as_bytes(), false),
                    "\n",
                ),
            ],
            vec![
                // Random bytes, a placeholder, a key of another length, the documented example.
                format!(
                    "  aws_secret_access_key: {}\n",
                    base64_of(r.pick(40, &alnum()).as_bytes(), false).to_lowercase()
                ),
                format!(
                    "  aws_secret_access_key: {}==\n",
                    &base64_of(&[0xfb; 40], false)[..54]
                ),
                format!(
                    "  aws_secret_access_key: {}\n",
                    base64_of(r.pick(40, UPPER).as_bytes(), false)
                ),
                format!(
                    "  aws_secret_access_key: {}\n",
                    base64_of(r.pick(41, &b64()).as_bytes(), false)
                ),
                format!(
                    "  aws_secret_access_key: {}\n",
                    base64_of(
                        concat!("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY").as_bytes(),
                        false
                    )
                ),
            ],
        ),
        (
            "github-token",
            vec![
                pos(
                    "github_token: ",
                    format!("{GHP}{}", r.pick(36, &alnum())),
                    "\n",
                ),
                pos(
                    "GITHUB_TOKEN=",
                    format!("{GHS}{}", r.pick(36, &alnum())),
                    "\n",
                ),
                // An open-ended length: a longer token goes whole.
                pos("t=", format!("{GHP}{}", r.pick(80, &alnum())), " end\n"),
            ],
            vec![
                format!("# classic tokens start with {GHP} and are 40 characters long\n"),
                format!("short = {GHP}{}\n", r.pick(20, &alnum())),
                format!("x = my{GHP}{}\n", r.pick(36, &alnum())),
            ],
        ),
        (
            "github-fine-grained-token",
            vec![pos(
                "ci_token: \"",
                format!("{GHPAT}{}_{}", r.pick(22, &alnum()), r.pick(59, &alnum())),
                "\"\n",
            )],
            vec![format!("prefix = \"{GHPAT}\"\n")],
        ),
        (
            "gitlab-token",
            vec![pos(
                "GITLAB_TOKEN=",
                format!("{GLPAT}{}", r.pick(20, &urlsafe())),
                "\n",
            )],
            vec![format!("GITLAB_TOKEN={GLPAT}{}\n", r.pick(12, &alnum()))],
        ),
        (
            "slack-token",
            vec![
                pos(
                    "slack_bot_token: '",
                    format!(
                        "{XOXB}{}-{}-{}",
                        r.pick(12, DIGITS),
                        r.pick(13, DIGITS),
                        r.pick(24, &alnum())
                    ),
                    "'\n",
                ),
                pos(
                    "app: ",
                    format!(
                        "{XAPP}1-{}-{}",
                        r.pick(11, &format!("{UPPER}{DIGITS}")),
                        r.pick(30, &alnum())
                    ),
                    "\n",
                ),
            ],
            vec![
                format!("# Slack bot tokens start with {XOXB}.\n"),
                "xoxo hugs\n".into(),
            ],
        ),
        (
            "slack-webhook",
            vec![pos(
                format!("url = {HOOK}"),
                format!(
                    "T{}/B{}/{}",
                    r.pick(8, &b32()),
                    r.pick(8, &b32()),
                    r.pick(24, &alnum())
                ),
                "\n",
            )],
            vec![format!("docs: {HOOK}\n")],
        ),
        (
            "stripe-key",
            vec![
                pos(
                    "stripe_secret_key = \"",
                    format!("{SKLIVE}{}", r.pick(24, &alnum())),
                    "\"\n",
                ),
                pos("key=", format!("{RKTEST}{}", r.pick(99, &alnum())), "\n"),
            ],
            vec![
                format!("mode = {SKLIVE}\n"),
                format!("desk{SKLIVE}{}\n", r.pick(24, &alnum())),
            ],
        ),
        (
            "npm-token",
            vec![
                pos(
                    "//registry.example.com/:_authToken=",
                    format!("{NPM}{}", r.pick(36, &alnum())),
                    "\n",
                ),
                pos(
                    "//registry.example.com/:_authToken=",
                    format!("{NPM}{}", r.pick(36, &format!("{UPPER}{LOWER}"))),
                    "\n",
                ),
            ],
            vec![
                format!("{NPM}{}\n", r.pick(36, LOWER)),
                format!("{NPM}{}\n", r.pick(36, UPPER)),
                format!("let {NPM}PackageVersionResolvedFromLockfilesV;\n"),
                "npm_config_registry=https://registry.example.com\n".into(),
            ],
        ),
        (
            "pypi-token",
            vec![pos(
                "password = ",
                format!("{PYPI}{}", r.pick(70, &urlsafe())),
                "\n",
            )],
            vec![
                format!("password = {PYPI}\n"),
                "repository = pypi-test\n".into(),
            ],
        ),
        (
            "google-api-key",
            vec![
                pos(
                    "maps_api_key: ",
                    format!("{AIZA}{}", r.pick(35, &urlsafe())),
                    "\n",
                ),
                pos(
                    "u?key=",
                    format!("{AIZA}{}", r.pick(35, &urlsafe())),
                    "&q=1\n",
                ),
            ],
            vec![
                format!("key: {AIZA}{}\n", r.pick(20, &urlsafe())),
                format!("key: {AIZA}{}\n", r.pick(36, &alnum())),
            ],
        ),
        (
            "anthropic-api-key",
            vec![pos(
                "ANTHROPIC_API_KEY=",
                format!("{SKANT}{}AA", r.pick(93, &urlsafe())),
                "\n",
            )],
            vec![format!("prefix: {SKANT}\n")],
        ),
        (
            "openai-api-key",
            vec![
                pos(
                    "OPENAI_API_KEY=",
                    format!(
                        "{SKPROJ}{}{OPENAI_MID}{}",
                        r.pick(74, &urlsafe()),
                        r.pick(74, &urlsafe())
                    ),
                    "\n",
                ),
                pos(
                    "key = '",
                    format!(
                        "sk-{}{OPENAI_MID}{}",
                        r.pick(20, &alnum()),
                        r.pick(20, &alnum())
                    ),
                    "'\n",
                ),
                pos(
                    "key: ",
                    format!("{SKPROJ}{}", r.pick(120, &urlsafe())),
                    "\n",
                ),
            ],
            vec![
                "task-list and risk-matrix\n".into(),
                format!("key: {SKPROJ}{}\n", r.pick(12, &alnum())),
            ],
        ),
        (
            "jwt",
            vec![
                pos("session_token: ", fake_jwt(r), "\n"),
                pos("Cookie: s=", fake_jwt(r), "; path=/\n"),
                // A header past 256 characters stays; the rest goes from its dot.
                {
                    let jwt = fake_jwt(r);
                    let head = format!("eyJ{}", r.pick(300, &urlsafe()));
                    let rest = &jwt[jwt.find('.').unwrap()..];
                    pos(format!("t: {head}"), rest, "\n")
                },
            ],
            vec![
                format!(
                    "payload: {}\n",
                    base64_of(br#"{"key":"value","n":12}"#, true)
                ),
                format!("commit = {hex40}\n"),
            ],
        ),
        (
            "private-key",
            vec![pos(
                format!("  \"private_key\": \"-----BEGIN {PRIV}-----\\n"),
                format!("{}\\n{}", r.pick(64, &b64()), r.pick(40, &b64())),
                format!("\\n-----END {PRIV}-----\\n\",\n"),
            )],
            vec![
                "-----BEGIN PUBLIC KEY-----\n".into(),
                format!("The {} is kept in a vault.\n", PRIV.to_ascii_lowercase()),
                format!("\"-----BEGIN {PRIV}-----\\n-----END {PRIV}-----\"\n"),
            ],
        ),
        (
            "url-password",
            vec![
                pos(
                    "repo_url: https://deploy:",
                    r.pick(18, &alnum()),
                    "@git.example.com/org/app.git\n",
                ),
                pos(
                    "DATABASE_URL=postgres://app:",
                    r.pick(16, &alnum()),
                    "@db.internal:5432/app\n",
                ),
                pos("REDIS=redis://:", r.pick(16, &alnum()), "@cache:6379/0\n"),
                pos(
                    "REDIS_URL=redis://:",
                    format!("hunter:{}", r.pick(10, &alnum())),
                    "@cache:6379/0\n",
                ),
                pos(
                    "u = \"https://x-access-token:",
                    format!("{GHS}{}", r.pick(36, &alnum())),
                    "@github.com/o/r\"\n",
                ),
                pos("amqp://u:", format!("p@{}", r.pick(10, &alnum())), "@mq/\n"),
                // Passwords that start as templates do, and hosts that start with `_`, `%`, `.`
                // or a letter beyond ASCII.
                pos("DATABASE_URL=postgres://admin:", "$uperS3cretPw", "@_db.internal:5432/app\n"),
                pos("u=postgres://admin:", "(Hunter2xyz)", "@\u{fc}ber.example/app\n"),
                pos("u=postgres://admin:", "{Hunter2xyz", "@%64b.internal/app\n"),
                pos("u=postgres://admin:", "%sHunter2xyz", "@.internal/app\n"),
                pos("u=postgres://admin:", "[Hunter2xyz]", "@db/app\n"),
                pos(format!("u=postgres://{}:", "u".repeat(200)), "Hunter2xyz", "@db/app\n"),
            ],
            vec![
                "  cvs://:pserver:anoncvs@sources.example.org:/cvs/src\n".into(),
                "homepage: https://example.com:8443/docs\n".into(),
                "clone: ssh://git@github.com/org/repo.git\n".into(),
                "mirror: https://mirror-user@example.com/repo.git\n".into(),
                "url = postgres://app:${DB_PASSWORD}@db/app\n".into(),
                concat!("see https:/", "/user:password@example.com for the form\n").into(),
                concat!("fmt = \"mysql:/", "/%s:%s@%s/%s\"\n").into(),
                "url = postgres://app:$DB_PASSWORD@db/app\n".into(),
                "url = postgres://app:{password}@db/app\n".into(),
                "url = postgres://app:{{ db_password }}@db/app\n".into(),
                "url = postgres://app:%(password)s@db/app\n".into(),
            ],
        ),
        (
            "url-password",
            vec![
                pos("DATABASE_URL=postgres://admin:", "H".repeat(300), "@db.internal:5432/app\n"),
                pos("u=https://:", r.pick(1000, &alnum()), "@example.com/\n"),
            ],
            vec![
                "homepage: https://example.com:8443/docs\n".into(),
                format!("see https://example.com:{}/x\n", "8".repeat(200)),
            ],
        ),
        (
            "authorization",
            vec![
                // In a JavaScript template literal, and joined from two string literals.
                pos(
                    "fetch(u, { headers: { Authorization: `Bearer ",
                    r.pick(40, &alnum()),
                    "` } })\n",
                ),
                pos(
                    "h.Authorization = \"Bearer \" + \"",
                    r.pick(40, &alnum()),
                    "\";\n",
                ),
                pos(
                    "const h = { 'Authorization': 'Bearer ' + '",
                    r.pick(40, &alnum()),
                    "' };\n",
                ),
                pos(
                    "curl -H \"Authorization: Bearer ",
                    r.pick(40, &alnum()),
                    "\" https://api.example.com/v1/me\n",
                ),
                // Assigned unquoted, and encoded in a URL: after a scheme word.
                pos(
                    "AUTHORIZATION=Bearer ",
                    r.pick(40, &alnum()),
                    "\n",
                ),
                pos(
                    "wss://rt.example.com/?authorization=Bearer%20",
                    r.pick(40, &alnum()),
                    "&v=2\n",
                ),
                pos(
                    "GET /?h=Authorization%3A%20Bearer%20",
                    r.pick(40, &alnum()),
                    " HTTP/1.1\n",
                ),
                // Encoded twice, an escaped tab or space, a no-break space.
                pos(
                    "?x=authorization%3DBearer%2520",
                    r.pick(40, &alnum()),
                    "&y=1\n",
                ),
                pos(
                    "\"Authorization: Bearer\\t",
                    r.pick(40, &alnum()),
                    "\"\n",
                ),
                pos(
                    "\"Authorization:\\u0020Bearer\\u0020",
                    r.pick(40, &alnum()),
                    "\"\n",
                ),
                pos(
                    "Authorization: Bearer\u{a0}",
                    r.pick(40, &alnum()),
                    "\n",
                ),
                // Rails' token scheme, with the credential as a parameter.
                pos(
                    "Authorization: Token token=\"",
                    format!("{}7{}", r.pick(15, LOWER), r.pick(16, DIGITS)),
                    "\", nonce=\"abc\"\n",
                ),
                pos(
                    "\textraheader = AUTHORIZATION: basic ",
                    base64_of(
                        format!("x-access-token:{}", r.pick(36, &alnum())).as_bytes(),
                        false,
                    ),
                    "\n",
                ),
                pos(
                    "  \"Authorization\": \"token ",
                    r.pick(40, &alnum()),
                    "\",\n",
                ),
                pos(
                    "Proxy-Authorization: Basic ",
                    base64_of(b"user:pass", false),
                    "\n",
                ),
                pos("authorization: ", r.pick(32, &alnum()), "\n"),
                // As environments, Python's WSGI and JavaScript's camel case name it.
                pos("HTTP_AUTHORIZATION: Bearer ", r.pick(40, &alnum()), "\n"),
                pos("  proxyAuthorization: '", r.pick(40, &alnum()), "',\n"),
                // After a scheme word, a value in a constant's shape is a credential.
                pos(
                    "Authorization: Bearer ",
                    format!("AB12_{}", r.pick(16, "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789")),
                    "\n",
                ),
                // Joined literals with the space inside the second, and Python's implicit join.
                pos(
                    "h.Authorization = 'Bearer' + ' ",
                    r.pick(32, &alnum()),
                    "';\n",
                ),
                pos(
                    "headers = {'Authorization': 'Bearer ' '",
                    r.pick(32, &alnum()),
                    "'}\n",
                ),
                // A header set in code from two strings.
                pos(
                    "req.Header.Set(\"Authorization\", \"Bearer ",
                    r.pick(40, &alnum()),
                    "\")\n",
                ),
                pos(
                    ".header('Authorization', 'token ",
                    r.pick(40, &alnum()),
                    "')\n",
                ),
                // Name/value pairs: a HAR file's headers, a Postman collection's.
                pos(
                    "{\"name\":\"Authorization\",\"value\":\"Bearer ",
                    r.pick(40, &alnum()),
                    "\"},\n",
                ),
                pos(
                    "{\"key\": \"Authorization\", \"value\": \"Basic ",
                    base64_of(b"user:pass", false),
                    "\", \"type\": \"text\"}\n",
                ),
                // A string literal assigned to it: PHP and Ruby, Python.
                pos(
                    "    'Authorization' => 'Bearer ",
                    r.pick(40, &alnum()),
                    "',\n",
                ),
                pos(
                    "headers[\"Authorization\"] = \"token ",
                    r.pick(40, &alnum()),
                    "\"\n",
                ),
                pos("authorization = 'Basic ", base64_of(b"deploy:hunter2", false), "'\n"),
                // JSON inside a string.
                pos(
                    "\"body\": \"{\\\"Authorization\\\": \\\"Bearer ",
                    r.pick(40, &alnum()),
                    "\\\"}\"\n",
                ),
                pos(
                    "\"har\": \"{\\\"name\\\":\\\"authorization\\\",\\\"value\\\":\\\"",
                    r.pick(40, &alnum()),
                    "\\\"}\"\n",
                ),
            ],
            vec![
                "# Clients send the API token as a Bearer token.\n".into(),
                "auth_scheme: Bearer\n".into(),
                "Authorization: Bearer\n".into(),
                "Authorization: Bearer ${TOKEN}\n".into(),
                "Authorization: Bearer YOUR_TOKEN_HERE\n".into(),
                // `proxy` inside a longer word starts no name.
                "AggregationProxyAuthorization: Bearer abc123def456ghi\n".into(),
                // Unquoted without a scheme word: a setting, not a credential.
                "authorization=required_for_all_calls_2\n".into(),
                // Minified JavaScript takes the credential from a property.
                "fetch(u,{headers:{Authorization:o1.accessToken,Accept:a}})\n".into(),
                "Authorization: e3.auth.bearerToken\n".into(),
                "headers = {\"Authorization\": f\"Bearer {token}\"}\n".into(),
                "Authorization: required for every call\n".into(),
                // Names in code, with acronyms: a value of letters alone is not a secret here.
                "def me(authorization: HTTPAuthorizationCredentials = Depends(bearer)):\n".into(),
                "    \"SNSNoAuthorization\": exceptions.SNSNoAuthorization,\n".into(),
                "curl -H \"Authorization: Bearer YourOpenAIAPIKey\"\n".into(),
                "xhr.setRequestHeader(\"Authorization\", \"Bearer \" + token);\n".into(),
                "{\"key\": \"Authorization\", \"value\": \"Bearer {{token}}\"}\n".into(),
                "Authorization, authentication and accounting (AAA) for 2FA-enabled users\n".into(),
                "    ('Binary Authorization', k8s_util.GetBinAuthzPolicy(record)),\n".into(),
                // Assignments of what is not a literal credential.
                "headers['Authorization'] = 'Bearer ' + token\n".into(),
                "    'authorization' => 'required',\n".into(),
                "authorization = base64encode(credentials)\n".into(),
                "auth = request.headers[\"Authorization\"] == \"Bearer \" + expected\n".into(),
                // Lists of header names.
                "allow_headers = [\"authorization\", \"x-amz-content-sha256\", \"x-b3-traceid\"]\n"
                    .into(),
                // A name that ends in the word (a CloudFormation resource type).
                format!(
                    "  \"AWS::Config::AggregationAuthorization\": \"{}\",\n",
                    r.pick(16, "0123456789abcdef")
                ),
                // A constant in code (an enum's variant), and AWS Signature Version 4's scheme,
                // which signs one request.
                "    pub Authorization: WINBIO_PRESENCE_0,\n".into(),
                "Authorization: AWS4-ECDSA-P256-SHA256 Credential=AKIDEXAMPLE/20260728/us-east-1/iam/aws4_request, SignedHeaders=host\n".into(),
                "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7\n".into(),
            ],
        ),
        (
            // A name/value pair over two lines.
            "authorization",
            vec![
                // A Kubernetes probe's header, a HAR file's, a Postman collection's.
                pos(
                    "      - name: Authorization\n        value: Bearer ",
                    r.pick(40, &alnum()),
                    "\n",
                ),
                pos(
                    "          {\n            \"name\": \"authorization\",\n            \"value\": \"Basic ",
                    base64_of(b"user:pass", false),
                    "\"\n          },\n",
                ),
                pos(
                    "  {\n    \"key\": \"Authorization\",\n    \"value\": \"",
                    r.pick(32, &alnum()),
                    "\",\n    \"type\": \"text\"\n  }\n",
                ),
                pos(
                    "- name: Proxy-Authorization\n  value: token ",
                    r.pick(40, &alnum()),
                    "\n",
                ),
            ],
            vec![
                "      - name: Authorization\n        value: Bearer {{token}}\n".into(),
                "      - name: Authorization\n        value: Bearer YOUR_TOKEN_HERE\n".into(),
                "- name: Authorization\n  valueFrom:\n".into(),
                format!("- name: Authorization-Policy\n  value: {}\n", r.pick(40, &alnum())),
                format!("- name: AggregationAuthorization\n  value: {}\n", r.pick(40, &alnum())),
                "\"name\": \"Authorization\",\n\"description\": \"the token\",\n".into(),
            ],
        ),
        (
            // A header folded over two lines.
            "authorization",
            vec![
                pos("Authorization:\n  Bearer ", r.pick(40, &alnum()), "\n"),
                pos("Proxy-Authorization: Bearer\n\t", r.pick(40, &alnum()), "\n"),
            ],
            vec![
                "Authorization:\n  required for every call\n".into(),
                "Authorization: Bearer\n  YOUR_TOKEN_HERE\n".into(),
            ],
        ),
    ]
}

#[test]
fn every_rule_replaces_its_secret_and_keeps_its_lookalikes() {
    let mut rng = Rng(0x5EED_0001);
    let cases = examples(&mut rng);
    let ids: Vec<&str> = cases.iter().map(|c| c.0).collect();
    let all: Vec<&str> = RULES.iter().map(|r| r.id).collect();
    assert_eq!(ids, all, "one case per rule, in table order");
    for (id, positives, negatives) in cases {
        assert!(!positives.is_empty() && !negatives.is_empty(), "{id}");
        for p in positives {
            let line = format!("{}{}{}", p.before, p.secret, p.after);
            let want = format!("{}{}{}", p.before, mark(id), p.after);
            assert_eq!(redact(&line), want, "{id}: {line:?}");
            let mut r = Redactor::new();
            let (_, tally) = redact_with(&mut r, &line);
            assert_eq!(
                tally.by_rule().collect::<Vec<_>>(),
                vec![(id, 1)],
                "{line:?}"
            );
        }
        for n in negatives {
            assert_eq!(redact(&n), n, "{id}: a look-alike was changed");
        }
    }
}

#[test]
fn every_match_holds_a_keyword_of_its_rule() {
    // The prefilter skips a text without keywords: that is sound only if no match can exist
    // without one. A rule of a pair is looked for only after its name line, which holds one.
    let mut rng = Rng(0x5EED_0002);
    // The examples stand in table order.
    for (i, (id, positives, _)) in examples(&mut rng).into_iter().enumerate() {
        for p in positives {
            let line = format!("{}{}{}", p.before, p.secret, p.after);
            let m = match RULES[i].name {
                None => regex(i).find(line.as_bytes()).expect(id),
                Some(name) => {
                    let lines: Vec<&str> = line.lines().collect();
                    let v = lines.iter().position(|l| regex(i).is_match(l.as_bytes()));
                    let v = v.expect(id);
                    assert!(v > 0, "{id}: a value line follows its name line");
                    compile(name)
                        .find(lines[v - 1].as_bytes())
                        .expect("the line before the value is its name line")
                }
            };
            let text = match RULES[i].any_case {
                true => m.as_bytes().to_ascii_lowercase(),
                false => m.as_bytes().to_vec(),
            };
            assert!(
                RULES[i]
                    .keywords
                    .iter()
                    .any(|k| text.windows(k.len()).any(|w| w == k.as_bytes())),
                "{id}: {:?}",
                String::from_utf8_lossy(m.as_bytes())
            );
        }
    }
}

#[test]
fn patterns_compile_and_their_matches_are_bounded_by_max_match() {
    // The longest text `pattern` can match, if it is bounded.
    let max_len = |pattern: &str| {
        regex_syntax::ParserBuilder::new()
            .unicode(false)
            .utf8(false)
            .build()
            .parse(pattern)
            .unwrap()
            .properties()
            .maximum_len()
    };
    let mut longest = 0;
    for (i, r) in RULES.iter().enumerate() {
        let _ = regex(i);
        let max = max_len(r.pattern).unwrap_or_else(|| panic!("{}: unbounded", r.id));
        longest = longest.max(max);
        assert!(r.secret < regex(i).captures_len(), "{}", r.id);
        // A name line is judged whole, and only when it is short.
        if let Some(name) = r.name {
            let _ = compile(name);
            assert!(max_len(name).is_some_and(|m| m <= NAME_MAX), "{}", r.id);
            assert!(name.starts_with("(?i)^") && name.ends_with('$'), "{}", r.id);
            assert!(
                r.pattern.starts_with('^'),
                "{}: a value starts its line",
                r.id
            );
        }
    }
    assert_eq!(
        longest, MAX_MATCH,
        "MAX_MATCH is the longest match, exactly"
    );
}

#[test]
fn rule_ids_are_lowercase_words_without_digits() {
    for r in &RULES {
        assert!(
            r.id.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
            "{}",
            r.id
        );
    }
    // Entries that share an id (one family in two forms) stand next to each other.
    let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
    ids.dedup();
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(ids.len(), unique.len(), "an id's entries are adjacent");
}

#[test]
fn the_rest_of_the_line_stays_and_several_secrets_go() {
    let mut rng = Rng(7);
    let a = format!("{GHP}{}", rng.pick(36, &alnum()));
    let b = format!("{AKIA}{}", rng.pick(16, &b32()));
    let line = format!("a={a} b={b} c={a}\r\n");
    let want = format!(
        "a={} b={} c={}\r\n",
        mark("github-token"),
        mark("aws-access-key-id"),
        mark("github-token")
    );
    let mut r = Redactor::new();
    let (out, tally) = redact_with(&mut r, &line);
    assert_eq!(out, want);
    assert_eq!(tally.total(), 3);
    assert_eq!(
        tally.by_rule().collect::<Vec<_>>(),
        vec![("aws-access-key-id", 1), ("github-token", 2)]
    );
}

#[test]
fn a_token_written_right_after_an_escape_goes_too() {
    let mut rng = Rng(11);
    let tokens = [
        (
            "aws-access-key-id",
            format!("{AKIA}{}", rng.pick(16, &b32())),
        ),
        ("github-token", format!("{GHP}{}", rng.pick(36, &alnum()))),
        ("gitlab-token", format!("{GLPAT}{}", rng.pick(20, &alnum()))),
        (
            "slack-token",
            format!("{XOXB}1234567890-{}", rng.pick(24, &alnum())),
        ),
        ("stripe-key", format!("{SKLIVE}{}", rng.pick(24, &alnum()))),
        ("npm-token", format!("{NPM}{}", rng.pick(36, &alnum()))),
        (
            "google-api-key",
            format!("{AIZA}{}", rng.pick(35, &urlsafe())),
        ),
        (
            "anthropic-api-key",
            format!("{SKANT}{}", rng.pick(32, &urlsafe())),
        ),
    ];
    // JSON's and C's escapes, percent-encoding (a URL inside a URL's query), `\x` and `\u`.
    let escapes = [
        "\\n",
        "\\t",
        "\\r\\n",
        "\\a",
        "\\e",
        "\\012",
        "^M",
        "%3D",
        "%0A",
        "%253D",
        "%u000A",
        "=3D",
        "\\x0a",
        "\\u000A",
        "\\U0000000a",
        "\x1b[32m",
        "\x1b[0;1m",
        "\\e[0m",
        "\\033[1;31m",
        "\\x1b[32m",
        "\\u001b[1m",
        "\\12",
        "^[[32m",
        "\x1b[0K",
        "\\E[32m",
        "\\27[32m",
    ];
    for escape in escapes {
        // An Authorization header after the escape, as a captured request holds it.
        let token = format!("{}9{}", rng.pick(11, &alnum()), rng.pick(8, &alnum()));
        let line = format!("\"x{escape}Authorization: Bearer {token}\"\n");
        let want = format!(
            "\"x{escape}Authorization: Bearer {}\"\n",
            mark("authorization")
        );
        assert_eq!(redact(&line), want, "authorization after {escape}");
        for (id, token) in &tokens {
            let line = format!("{{\"log\": \"key:{escape}{token}\"}}\n");
            let want = format!("{{\"log\": \"key:{escape}{}\"}}\n", mark(id));
            assert_eq!(redact(&line), want, "{id} after {escape}");
        }
    }
    // The key after its id, and a header of a captured request.
    let id = format!("{AKIA}{}", rng.pick(16, &b32()));
    let key = rng.pick(40, &b64());
    let line = format!("\"ID,Key\\n{id},{key}\\n\"\n");
    let want = format!(
        "\"ID,Key\\n{},{}\\n\"\n",
        mark("aws-access-key-id"),
        mark("aws-secret-access-key")
    );
    assert_eq!(redact(&line), want);
    let token = format!("{}9{}", rng.pick(11, &alnum()), rng.pick(8, &alnum()));
    let line = format!("\"Host: a\\r\\nAuthorization: Bearer {token}\\r\\n\"\n");
    let want = format!(
        "\"Host: a\\r\\nAuthorization: Bearer {}\\r\\n\"\n",
        mark("authorization")
    );
    assert_eq!(redact(&line), want);
    // Inside a longer word, or after an escaped backslash's letter that is no escape, a prefix
    // starts no token.
    for (_, token) in &tokens {
        for before in ["x", "%zz", "\\q", "%3", "=3d", "[32m", "\\k[0m", "^m"] {
            let line = format!("id = {before}{token}\n");
            assert_eq!(redact(&line), line, "{before}{token}");
        }
    }
}

#[test]
fn a_secret_in_what_another_match_shows_goes_too() {
    // A token as a URL's user name, before the URL's password (GitHub's old token form):
    // the URL's match starts first, yet its user name is shown, so the token must go first.
    let mut rng = Rng(31);
    let users = [
        (format!("{GHP}{}", rng.pick(36, &alnum())), "github-token"),
        (
            format!("{GLPAT}{}", rng.pick(20, &urlsafe())),
            "gitlab-token",
        ),
        (
            format!("{AKIA}{}", rng.pick(16, &b32())),
            "aws-access-key-id",
        ),
    ];
    for (user, id) in users {
        let line = format!("url = https://{user}:x-oauth-basic@github.com/o/r.git\n");
        let want = format!(
            "url = https://{}:{}@github.com/o/r.git\n",
            mark(id),
            mark("url-password")
        );
        assert_eq!(redact(&line), want);
        assert_at_every_seam(&line, &want);
    }
}

/// Checks that `line` (a short line) comes out as `want` inside a long line read in pieces,
/// wherever the first piece's end falls in it: the first scan of a long line stops at
/// the piece's end less the hold-back, and a match there must not be lost to the next piece.
fn assert_at_every_seam(line: &str, want: &str) {
    let first = 1 << 16;
    for pad in (0..3 * MAX_MATCH + line.len()).step_by(7) {
        let filler = "w".repeat(first - 3 * MAX_MATCH + pad);
        let after = "w".repeat(4 * MAX_MATCH);
        let long = format!("{filler} {} {after}\n", line.trim_end());
        let want = format!("{filler} {} {after}\n", want.trim_end());
        for sizes in [&[first][..], &[first, 4093]] {
            let got =
                String::from_utf8_lossy(&stream(&mut Redactor::new(), long.as_bytes(), sizes))
                    .into_owned();
            // Only the part around the URL: the filler would drown the message.
            let at = filler.len().saturating_sub(20);
            assert_eq!(
                &got[at.min(got.len())..],
                &want[at..],
                "pad {pad}, pieces {sizes:?}"
            );
        }
    }
}

#[test]
fn pair_of_aws_keys() {
    // The id and the key both go, each under its own rule, in the forms AWS writes them.
    let mut rng = Rng(32);
    let id = format!("{AKIA}{}", rng.pick(16, &b32()));
    let key = rng.pick(40, &b64());
    let (i, k) = (mark("aws-access-key-id"), mark("aws-secret-access-key"));
    for (line, want) in [
        (format!("{id},{key}\n"), format!("{i},{k}\n")),
        (
            format!("bob,,{id},{key},https://signin.aws.amazon.com/console\n"),
            format!("bob,,{i},{k},https://signin.aws.amazon.com/console\n"),
        ),
        (
            format!("<AccessKeyId>{id}</AccessKeyId><SecretAccessKey>{key}</SecretAccessKey>\n"),
            format!("<AccessKeyId>{i}</AccessKeyId><SecretAccessKey>{k}</SecretAccessKey>\n"),
        ),
    ] {
        let mut r = Redactor::new();
        let (out, tally) = redact_with(&mut r, &line);
        assert_eq!(out, want);
        assert_eq!(
            tally.by_rule().collect::<Vec<_>>(),
            vec![("aws-access-key-id", 1), ("aws-secret-access-key", 1)]
        );
    }
    assert_at_every_seam(&format!("{id},{key}"), &format!("{i},{k}"));
}

#[test]
fn a_match_that_reaches_further_hides_the_rest() {
    // Two secrets that start at the same byte: the one whose token runs on further goes, not
    // the one whose pattern is longer. A JWT with a long header (its pattern runs past the 64
    // characters the Authorization rule's pattern takes) in an Authorization header, followed
    // by SD-JWT disclosures (`~…`), which the JWT's characters do not take but a header
    // credential's do.
    let mut rng = Rng(33);
    let head = base64_of(
        format!(
            r#"{{"alg":"ES256","typ":"vc+sd-jwt","kid":"{}"}}"#,
            rng.pick(40, &alnum())
        )
        .as_bytes(),
        true,
    );
    let jwt = format!("{head}.{}", fake_jwt(&mut rng).split_once('.').unwrap().1);
    let disclosure = base64_of(
        format!(r#"["{}","email"]"#, rng.pick(22, &alnum())).as_bytes(),
        true,
    );
    let line = format!("Authorization: Bearer {jwt}~{disclosure}~\n");
    assert_eq!(
        redact(&line),
        format!("Authorization: Bearer {}\n", mark("authorization"))
    );
    // A private key on one line whose material starts with a token: the key's material runs on
    // to its END marker, so the key goes, not the token alone.
    let token = format!("{GHP}{}", rng.pick(36, &alnum()));
    let line = format!(
        "{{\"private_key\": \"-----BEGIN {PRIV}----- {token}+{}\\n-----END {PRIV}-----\\n\"}}\n",
        rng.pick(64, &b64())
    );
    let want = format!(
        "{{\"private_key\": \"-----BEGIN {PRIV}----- {}\\n-----END {PRIV}-----\\n\"}}\n",
        mark("private-key")
    );
    assert_eq!(redact(&line), want);
}

#[test]
fn a_line_dense_with_secrets_loses_all_of_them() {
    let mut rng = Rng(8);
    let tokens: Vec<String> = (0..2000)
        .map(|_| format!("{NPM}{}", rng.pick(36, &alnum())))
        .collect();
    let line = tokens.join(",") + "\n";
    let out = redact(&line);
    assert_eq!(out, vec![mark("npm-token"); 2000].join(",") + "\n");
}

#[test]
fn passes_means_line_changes_nothing() {
    let mut r = Redactor::new();
    let clean = "fn main() {\n    println!(\"hello\");\n}\n";
    assert!(r.passes(clean.as_bytes()));
    assert_eq!(r.line(b"fn main() {\n"), Shown::Same);
    assert!(!r.passes(format!("x\nkey = {GHP}\n").as_bytes()));
    // A keyword without a secret: not passing, yet the line stays.
    assert_eq!(r.line(format!("key = {GHP}\n").as_bytes()), Shown::Same);
    assert_eq!(r.tally().total(), 0);
    assert_eq!(r.tally().note(), None);
}

#[test]
fn a_value_after_its_name_line_goes_however_the_reader_moves_on() {
    let mut rng = Rng(31);
    let key = rng.pick(40, &b64());
    let name = "  - name: AWS_SECRET_ACCESS_KEY\n";
    let value = format!("    value: {key}\n");
    let want = format!("    value: {}\n", mark("aws-secret-access-key"));
    let before = format!("{}{name}", "image: app\n".repeat(3));
    // Line by line; the fast paths refuse the value line.
    let mut r = Redactor::new();
    redact_with(&mut r, &before);
    assert!(!r.passes(value.as_bytes()));
    assert_eq!(r.clean_prefix(value.as_bytes()), 0);
    assert_eq!(whole(&mut r, value.as_bytes()), want.as_bytes());
    // Past the lines before it unseen (grep, cat FROM_LINE), with or without a key block in view.
    for settled in [true, false] {
        let mut r = Redactor::new();
        match settled {
            true => {
                assert!(r.settled(before.as_bytes()));
                r.skip_settled(before.as_bytes());
            }
            false => r.skip(
                format!("-----BEGIN {PRIV}-----\nM\n-----END {PRIV}-----\n{before}").as_bytes(),
            ),
        }
        assert_eq!(
            whole(&mut r, value.as_bytes()),
            want.as_bytes(),
            "{settled}"
        );
    }
    // Skipping nothing keeps the state; skipping the value line or another line clears it.
    let mut r = Redactor::new();
    r.skip(before.as_bytes());
    r.skip(b"");
    r.skip_settled(b"");
    assert_eq!(whole(&mut r, value.as_bytes()), want.as_bytes());
    let mut r = Redactor::new();
    r.skip(before.as_bytes());
    r.skip(value.as_bytes());
    assert_eq!(whole(&mut r, value.as_bytes()), value.as_bytes());
    // A window that starts at the value line (tail).
    let text = format!("{before}{value}");
    assert_eq!(window_from(text.as_bytes(), before.len()), want);
    // A value line too long to be redacted whole, in pieces of any size.
    let long = format!("{}{}\n", value.trim_end(), " x".repeat(MAX_LINE));
    for sizes in [&[1000][..], &[7, 300, 5000], &[MAX_LINE]] {
        let mut r = Redactor::new();
        r.skip(before.as_bytes());
        let shown = String::from_utf8(stream(&mut r, long.as_bytes(), sizes)).unwrap();
        assert!(
            shown.starts_with(want.trim_end()) && !shown.contains(&key),
            "{sizes:?}"
        );
    }
    // The name line's own keyword starts nothing on it, nor on a line further on.
    let mut r = Redactor::new();
    assert_eq!(
        whole(
            &mut r,
            format!("value: {key} # AWS_SECRET_ACCESS_KEY\n").as_bytes()
        ),
        format!("value: {key} # AWS_SECRET_ACCESS_KEY\n").as_bytes()
    );
    let spaced = format!("{name}    # the key\n{value}");
    assert_eq!(redact(&spaced), spaced);
}

#[test]
fn every_pair_goes_as_well_after_its_name_line_skipped() {
    let mut rng = Rng(0x5EED_0003);
    for (i, (id, positives, _)) in examples(&mut rng).into_iter().enumerate() {
        if RULES[i].name.is_none() {
            continue;
        }
        for p in positives {
            let text = format!("{}{}{}", p.before, p.secret, p.after);
            let lines: Vec<&str> = text.split_inclusive('\n').collect();
            let v = lines.iter().position(|l| l.contains(&p.secret)).expect(id);
            let before = lines[..v].concat();
            let want = redact(&text)
                .split_inclusive('\n')
                .nth(v)
                .unwrap()
                .to_string();
            assert!(!want.contains(&p.secret), "{id}: {text:?}");
            let mut r = Redactor::new();
            r.skip(before.as_bytes());
            assert_eq!(
                whole(&mut r, lines[v].as_bytes()),
                want.as_bytes(),
                "{text:?}"
            );
            let mut r = Redactor::new();
            r.skip_settled(before.as_bytes());
            assert_eq!(
                whole(&mut r, lines[v].as_bytes()),
                want.as_bytes(),
                "{text:?}"
            );
        }
    }
}

#[test]
fn a_name_line_that_ends_a_key_block_is_one_for_every_reader() {
    // A line with `-----END` in it is the block's last line; judged whole, it is a name line,
    // for line() as for skip().
    let mut rng = Rng(32);
    let key = rng.pick(40, &b64());
    let material = format!("{}\n", "M".repeat(63)).repeat(MAX_KEY_BLOCK / 64);
    let name = "- name: -----END-secret-key\n";
    let before = format!("-----BEGIN {PRIV}-----\n{material}{name}");
    let value = format!("  value: {key}\n");
    let whole = redact(&format!("{before}{value}"));
    assert!(!whole.contains(&key), "{whole}");
    let mut r = Redactor::new();
    r.skip(before.as_bytes());
    let shown = String::from_utf8(self::whole(&mut r, value.as_bytes())).unwrap();
    assert!(whole.ends_with(&shown), "{shown}");
}

#[test]
fn clean_prefix_stops_at_the_first_line_with_a_keyword() {
    let mut rng = Rng(24);
    let token = format!("{GHP}{}", rng.pick(36, &alnum()));
    for filler in [10, 5000] {
        let clean = "fn main() {}\n".repeat(filler);
        let text = format!("{clean}let t = \"{token}\";\nmore\n{clean}");
        let r = Redactor::new();
        assert_eq!(r.clean_prefix(text.as_bytes()), clean.len());
        assert_eq!(r.clean_prefix(clean.as_bytes()), clean.len());
        // A reader's loop: the clean prefix as it is, the next line redacted, and again.
        let mut r = Redactor::new();
        let mut out = Vec::new();
        let mut rest = text.as_bytes();
        while !rest.is_empty() {
            let n = r.clean_prefix(rest);
            out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            if let Some(line) = rest.split_inclusive(|&b| b == b'\n').next() {
                out.extend(whole(&mut r, line));
                rest = &rest[line.len()..];
            }
        }
        assert_eq!(out, redact(&text).as_bytes());
        assert_eq!(r.tally().total(), 1);
    }
    let mut r = Redactor::new();
    assert_eq!(
        r.line(format!("-----BEGIN {PRIV}-----\n").as_bytes()),
        Shown::Same
    );
    assert_eq!(
        r.clean_prefix(b"abc\n"),
        0,
        "inside a block nothing is clean"
    );
}

// ---------------------------------------------------------------------------------------------
// Private-key blocks
// ---------------------------------------------------------------------------------------------

fn key_block(rng: &mut Rng, label: &str, lines: usize, indent: &str) -> (String, Vec<String>) {
    let body: Vec<String> = (0..lines).map(|_| rng.pick(64, &b64())).collect();
    let mut text = format!("{indent}-----BEGIN {label}-----\n");
    for l in &body {
        text += &format!("{indent}{l}\n");
    }
    text += &format!("{indent}-----END {label}-----\n");
    (text, body)
}

#[test]
fn a_key_block_becomes_one_marker_line_between_its_markers() {
    let mut rng = Rng(9);
    for (label, indent) in [
        (format!("RSA {PRIV}"), ""),
        (PRIV.to_string(), ""),
        (format!("OPENSSH {PRIV}"), "  "),
        (format!("PGP {PRIV} BLOCK"), ""),
    ] {
        let (block, _) = key_block(&mut rng, &label, 12, indent);
        let text = format!("name: demo\nkey: |\n{block}region: eu\n");
        let mut r = Redactor::new();
        let (out, tally) = redact_with(&mut r, &text);
        assert_eq!(
            out,
            format!(
                "name: demo\nkey: |\n{indent}-----BEGIN {label}-----\n{indent}{}\n{indent}-----END {label}-----\nregion: eu\n",
                mark("private-key")
            )
        );
        assert_eq!(
            tally.by_rule().collect::<Vec<_>>(),
            vec![("private-key", 1)]
        );
        assert!(r.passes(b"region: eu\n"), "the block is closed after END");
    }
}

#[test]
fn a_block_without_end_hides_to_the_end_of_the_stream() {
    let mut rng = Rng(10);
    let (block, body) = key_block(&mut rng, PRIV, 5, "");
    let cut: String = block.lines().take(4).map(|l| format!("{l}\n")).collect();
    let mut r = Redactor::new();
    let (out, _) = redact_with(&mut r, &cut);
    assert_eq!(
        out,
        format!("-----BEGIN {PRIV}-----\n{}\n", mark("private-key"))
    );
    assert!(!r.passes(b"plain\n"), "the block is still open");
    assert!(!out.contains(&body[0][..8]));
}

#[test]
fn a_window_that_starts_inside_a_block_shows_the_marker_not_the_material() {
    // As tail and grep do: skip the lines before the window, then show the rest.
    let mut rng = Rng(11);
    let (block, _) = key_block(&mut rng, PRIV, 6, "");
    let lines: Vec<&str> = block.split_inclusive('\n').collect();
    let mut r = Redactor::new();
    r.skip(lines[..3].concat().as_bytes());
    let (out, tally) = redact_with(&mut r, &lines[3..].concat());
    assert_eq!(
        out,
        format!("{}\n-----END {PRIV}-----\n", mark("private-key"))
    );
    assert_eq!(tally.total(), 1);
}

/// A key written in code as string literals, one per line: `"-----BEGIN …-----\\n" +` in Go,
/// Java and JavaScript (`join` the continuation), or `"…\\n"` in Python's implicit joining.
fn key_in_literals(rng: &mut Rng, label: &str, join: &str) -> (String, Vec<String>) {
    let body: Vec<String> = (0..4).map(|_| rng.pick(64, &b64())).collect();
    let mut text = format!("const key = \"-----BEGIN {label}-----\\n\"{join}\n");
    for l in &body {
        text += &format!("\t\"{l}\\n\"{join}\n");
    }
    text += &format!("\t\"-----END {label}-----\\n\"\n");
    (text, body)
}

#[test]
fn a_key_written_as_string_literals_in_code_is_a_block() {
    let mut rng = Rng(31);
    let label = format!("RSA {PRIV}");
    for join in [" +", "", " + ", ",", " .", " ..", ");"] {
        let (text, body) = key_in_literals(&mut rng, &label, join);
        let want = format!(
            "const key = \"-----BEGIN {label}-----\\n\"{join}\n\t{}\n\t\"-----END {label}-----\\n\"\n",
            mark("private-key")
        );
        assert_eq!(redact(&text), want, "joined by {join:?}");
        // The same for every window: the lines after any number skipped show no material.
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        for k in 0..lines.len() {
            let mut r = Redactor::new();
            r.skip(lines[..k].concat().as_bytes());
            let shown = redact_with(&mut r, &lines[k..].concat()).0;
            for l in &body {
                assert!(!shown.contains(&l[..16]), "from line {k}: {shown}");
            }
        }
    }
    // Prose that names the marker at the end of a sentence hides nothing after it.
    let text = format!("A key starts with -----BEGIN {label}-----.\nThe next line is prose.\n");
    assert_eq!(redact(&text), text);
    // A marker that is a constant in code, with no escaped break, opens no block, and a line
    // of code after one is shown as before.
    let text = format!("rsa := \"-----BEGIN {label}-----\\n\" + x\nreturn nil\n");
    assert_eq!(redact(&text), text);
}

/// Every reader's view of `text`: from the start, after skipping each prefix of lines, and
/// from each line as tail's window starts there.
fn every_view(text: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut views = vec![("whole".to_string(), redact(text))];
    for k in 0..lines.len() {
        let mut r = Redactor::new();
        r.skip(lines[..k].concat().as_bytes());
        let rest = lines[k..].concat();
        views.push((format!("after skipping {k}"), redact_with(&mut r, &rest).0));
        let w = text.len() - rest.len();
        views.push((format!("window from {k}"), window_from(text.as_bytes(), w)));
    }
    views
}

#[test]
fn a_marker_in_a_string_literal_opens_a_block_only_before_key_material() {
    let mut rng = Rng(33);
    let label = format!("RSA {PRIV}");
    // Constants and code that builds a key: every view shows them as they are.
    for text in [
        format!("MARKERS = {{\n    \"rsa\": \"-----BEGIN {label}-----\",\n}}\n\ndef load(path):\n"),
        format!("# \"-----BEGIN ENCRYPTED {PRIV}-----\"\n_KEY_REGEX = re.compile(\n"),
        format!(
            "pem = '-----BEGIN {label}-----\\n'\npem += b64encode(der)\npem += '-----END {label}-----\\n'\n"
        ),
        format!(
            "begin = \"-----BEGIN {label}-----\"\nend = \"-----END {label}-----\"\nreturn nil\n"
        ),
        // A long name after a constant: code, however long, when it is letters alone.
        format!(
            "const pemHeader = \"-----BEGIN {label}-----\"\n\nfunc parsePrivateKeyFromPEM(d []byte) {{\n\treturn\n}}\nfunc Other() int {{ return 1 }}\n"
        ),
    ] {
        for (view, shown) in every_view(&text) {
            assert!(!shown.contains("REDACTED"), "{view}: {shown}");
        }
        assert_eq!(redact(&text), text);
    }
    // Keys as string literals, one line each: JSON's array of lines, an encrypted key, and an
    // armored key whose blank line is a literal too. No view shows a piece of the material.
    let body: Vec<String> = (0..4).map(|_| rng.pick(64, &b64())).collect();
    let pgp = format!("PGP {PRIV} BLOCK");
    let quoted = |l: &String| format!("  \"{l}\",\n");
    let forms = [
        format!(
            "{{\"key\": [\n  \"-----BEGIN {label}-----\",\n{}  \"-----END {label}-----\"\n]}}\n",
            body.iter().map(quoted).collect::<String>()
        ),
        format!(
            "k = (\"-----BEGIN {label}-----\\n\"\n  \"Proc-Type: 4,ENCRYPTED\\n\"\n  \"DEK-Info: AES-128-CBC,00FF\\n\"\n  \"\\n\"\n{}  \"-----END {label}-----\\n\")\n",
            body.iter()
                .map(|l| format!("  \"{l}\\n\"\n"))
                .collect::<String>()
        ),
        format!(
            "k = \"-----BEGIN {pgp}-----\\n\" +\n  \"\\n\" +\n{}  \"-----END {pgp}-----\\n\"\n",
            body.iter()
                .map(|l| format!("  \"{l}\\n\" +\n"))
                .collect::<String>()
        ),
        // An encrypted key as Python bytes, its headers after the literal's prefix.
        format!(
            "KEY = (b\"-----BEGIN {label}-----\\n\"\n  b\"Proc-Type: 4,ENCRYPTED\\n\"\n  b\"DEK-Info: AES-128-CBC,3F17F5316E2BAC89\\n\"\n  b\"\\n\"\n{}  b\"-----END {label}-----\\n\")\n",
            body.iter()
                .map(|l| format!("  b\"{l}\\n\"\n"))
                .collect::<String>()
        ),
        // A comment before the key, a PGP header, lines wrapped narrow.
        format!(
            "KEY = (\n    \"-----BEGIN {label}-----\\n\"\n    # test key\n{}    \"-----END {label}-----\\n\"\n)\n",
            body.iter()
                .map(|l| format!("    \"{l}\\n\"\n"))
                .collect::<String>()
        ),
        format!(
            "k = [\"-----BEGIN {pgp}-----\",\n \"MessageID: abc\",\n{} \"-----END {pgp}-----\"]\n",
            body.iter()
                .map(|l| format!(" \"{l}\",\n"))
                .collect::<String>()
        ),
        format!(
            "k = (\"-----BEGIN {label}-----\\n\"\n{}  \"-----END {label}-----\\n\")\n",
            body.iter()
                .flat_map(|l| [&l[..20], &l[20..40], &l[40..]])
                .map(|l| format!("  \"{l}\\n\"\n"))
                .collect::<String>()
        ),
    ];
    for text in forms {
        for (view, shown) in every_view(&text) {
            for l in &body {
                for piece in [&l[..12], &l[20..32], &l[40..52]] {
                    assert!(!shown.contains(piece), "{view}: {shown}");
                }
            }
        }
        assert_eq!(
            redact(&text).matches(&mark("private-key")).count(),
            1,
            "{text}"
        );
    }
    // A comment that defers the decision is redacted as any line is.
    let password = format!("{}7{}", rng.pick(5, &alnum()), rng.pick(5, &alnum()));
    let text = format!(
        "k = \"-----BEGIN {label}-----\"\n# was https://deploy:{password}@git.example.com\nx = 1\n"
    );
    for (view, shown) in every_view(&text) {
        assert!(!shown.contains(&password), "{view}: {shown}");
    }
    assert_eq!(
        redact(&text),
        format!(
            "k = \"-----BEGIN {label}-----\"\n# was https://deploy:{}@git.example.com\nx = 1\n",
            mark("url-password")
        )
    );
    // JSON that escapes `/` (PHP) or writes it as `\u002F` in a first line whose runs of
    // other characters are short.
    let first: String = (0..8).map(|_| rng.pick(9, &alnum()) + "/").collect();
    for written in ["\\/", "\\u002F", "\\u002f"] {
        let line = first.replace('/', written);
        let text = format!(
            "{{\"key\": [\n  \"-----BEGIN {label}-----\",\n  \"{line}\",\n  \"{}\",\n  \"-----END {label}-----\"\n]}}\n",
            body[0]
        );
        let shown = redact(&text);
        assert!(
            !shown.contains(&first[..9]) && !shown.contains(&body[0]),
            "{shown}"
        );
    }
}

#[test]
fn no_window_of_a_file_shows_key_material() {
    // Every head cut (the first k lines) and every tail window (lines i.. after skipping the
    // ones before) of a file with key blocks, plain and in YAML, shows no piece of a key line.
    let mut rng = Rng(25);
    let (a, body_a) = key_block(&mut rng, &format!("RSA {PRIV}"), 9, "");
    let (b, body_b) = key_block(&mut rng, &format!("OPENSSH {PRIV}"), 5, "    ");
    let text = format!("top: 1\n{a}mid: 2\nkey: |\n{b}end: 3\n");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let pieces: Vec<&str> = body_a
        .iter()
        .chain(&body_b)
        .flat_map(|l| [&l[..8], &l[28..36], &l[l.len() - 8..]])
        .collect();
    let check = |shown: &str, what: &str| {
        for p in &pieces {
            assert!(!shown.contains(p), "{what} shows {p:?}: {shown}");
        }
    };
    for k in 0..=lines.len() {
        check(
            &redact(&lines[..k].concat()),
            &format!("the first {k} lines"),
        );
        let mut r = Redactor::new();
        r.skip(lines[..k].concat().as_bytes());
        let (shown, tally) = redact_with(&mut r, &lines[k..].concat());
        check(&shown, &format!("the lines from {k}"));
        let in_block = |l: &str| {
            body_a
                .iter()
                .chain(&body_b)
                .any(|b| l.trim_end() == b.trim())
        };
        let blocks_shown = shown.matches("[REDACTED:private-key]").count() as u64;
        assert_eq!(tally.total(), blocks_shown, "from line {k}");
        if lines[k..].iter().any(|l| in_block(l)) {
            assert!(
                blocks_shown >= 1,
                "a window with key lines shows the marker, from {k}"
            );
        }
    }
}

#[test]
fn a_key_block_of_any_length_is_hidden_to_its_end() {
    // An armored OpenPGP key with a photo ID runs past 64 KiB; no line of it is shown, and the
    // state is one flag, whatever the length.
    let mut rng = Rng(12);
    let line = rng.pick(64, &b64()) + "\n";
    let n = 4 * MAX_KEY_BLOCK / line.len();
    let text = format!(
        "-----BEGIN {PRIV}-----\n\n{}=AbCd\n-----END {PRIV}-----\nafter\n",
        line.repeat(n)
    );
    let mut r = Redactor::new();
    let (out, _) = redact_with(&mut r, &text);
    let want = format!(
        "-----BEGIN {PRIV}-----\n{}\n-----END {PRIV}-----\nafter\n",
        mark("private-key"),
    );
    assert_eq!(out, want);
    // Without its END, to the end of the stream; skip() follows the block alike.
    let open = format!("-----BEGIN {PRIV}-----\n{}", line.repeat(n));
    let mut s = Redactor::new();
    s.skip(open.as_bytes());
    assert_eq!(
        s.line(line.as_bytes()),
        Shown::Replaced(format!("{}\n", mark("private-key")).into_bytes())
    );
    assert_eq!(s.line(b"text after\n"), Shown::Hidden);
}

#[test]
fn material_before_end_on_the_same_line_goes_too() {
    let mut rng = Rng(13);
    let a = rng.pick(64, &b64());
    let b = rng.pick(20, &b64());
    let text = format!("-----BEGIN {PRIV}-----\n{a}\n{b}-----END {PRIV}-----\n");
    assert_eq!(
        redact(&text),
        format!(
            "-----BEGIN {PRIV}-----\n{}\n-----END {PRIV}-----\n",
            mark("private-key")
        )
    );
    let text = format!("-----BEGIN {PRIV}-----\n  {b}-----END {PRIV}-----\n");
    assert_eq!(
        redact(&text),
        format!(
            "-----BEGIN {PRIV}-----\n  {}-----END {PRIV}-----\n",
            mark("private-key")
        )
    );
}

#[test]
fn public_keys_and_certificates_stay() {
    let mut rng = Rng(14);
    let (pubkey, _) = key_block(&mut rng, "PUBLIC KEY", 4, "");
    let (cert, _) = key_block(&mut rng, "CERTIFICATE", 8, "");
    let text = pubkey + &cert;
    assert_eq!(redact(&text), text);
}

#[test]
fn a_new_begin_ends_an_open_block() {
    let mut rng = Rng(15);
    let a = rng.pick(64, &b64());
    let (cert, _) = key_block(&mut rng, "CERTIFICATE", 2, "");
    let text = format!("-----BEGIN {PRIV}-----\n{a}\n{cert}");
    assert_eq!(
        redact(&text),
        format!("-----BEGIN {PRIV}-----\n{}\n{cert}", mark("private-key"))
    );
}

#[test]
fn a_key_on_one_line_goes_however_its_line_breaks_are_written() {
    let mut rng = Rng(41);
    let body: Vec<String> = (0..3).map(|_| rng.pick(64, &b64())).collect();
    let label = format!("RSA {PRIV}");
    for (sep, open, close) in [
        ("\\\\n", "{\"cfg\":\"{\\\"key\\\":\\\"", "\\\"}\"}"),
        ("&#10;", "<k>", "</k>"),
        ("\\u000a", "{\"k\": \"", "\"}"),
        ("<br>", "", ""),
        ("\", \"", "[\"", "\"]"),
        ("\\n\" + \"", "k := \"", "\\n\""),
        ("\\n\" \"", "KEY = \"", "\\n\""),
        ("&#010;", "<k>", "</k>"),
        ("&#x000A;", "<k>", "</k>"),
        ("&NewLine;", "<k>", "</k>"),
        ("%250A", "u=", ""),
        ("\\x0a", "\"", "\""),
        ("\\012", "\"", "\""),
        ("\\\\\\\\n", "\"", "\""),
        ("\r", "", ""),
    ] {
        let line = format!(
            "{open}-----BEGIN {label}-----{sep}{}{sep}-----END {label}-----{close}\n",
            body.join(sep)
        );
        let shown = redact(&line);
        for b in &body {
            assert!(
                !shown.contains(&b[..16]) && !shown.contains(&b[48..]),
                "{sep}: {shown}"
            );
        }
        assert!(shown.contains(&mark("private-key")), "{shown}");
    }
    // A placeholder of a key, and a line of marker constants, hold no key.
    let line =
        format!("key=\"-----BEGIN {PRIV}-----\\\\nXXXX\\\\nXXXX\\\\n-----END {PRIV}-----\"\n");
    assert_eq!(redact(&line), line);
    let line = format!(
        "{{\"rsa\": \"-----BEGIN {label}-----\", \"ec\": \"-----BEGIN EC {PRIV}-----\"}}\n"
    );
    assert_eq!(redact(&line), line);
}

#[test]
fn an_inline_key_without_end_hides_the_rest_of_its_line() {
    let mut rng = Rng(16);
    let a = rng.pick(200, &b64());
    let text = format!("k = \"-----BEGIN {PRIV}-----\\n{a}\nnext\n");
    assert_eq!(
        redact(&text),
        format!(
            "k = \"-----BEGIN {PRIV}-----\\n{}\nnext\n",
            mark("private-key")
        )
    );
}

#[test]
fn a_token_that_runs_past_a_one_line_keys_bound_goes_whole() {
    // Material past MAX_KEY_BLOCK is shown as text, but not the rest of a token that began
    // inside the material: a line in pieces hides it through its end.
    let mut rng = Rng(34);
    let tail = rng.pick(1500, &alnum());
    let material = format!(
        "MII{}/{GHP}{tail}",
        rng.pick(MAX_KEY_BLOCK - 1000, &alnum())
    );
    let line = format!("\"-----BEGIN {PRIV}-----\\n{material} after\\n-----END {PRIV}-----\\n\"\n");
    let want = format!(
        "\"-----BEGIN {PRIV}-----\\n{} after\\n-----END {PRIV}-----\\n\"\n",
        mark("private-key")
    );
    assert_eq!(
        whole(&mut Redactor::new(), line.as_bytes()),
        want.as_bytes()
    );
    for sizes in [&[1 << 16][..], &[4093]] {
        let got = stream(&mut Redactor::new(), line.as_bytes(), sizes);
        assert_eq!(String::from_utf8_lossy(&got), want, "pieces {sizes:?}");
    }
}

#[test]
fn a_line_that_opens_a_block_opens_it_whatever_came_before() {
    // An END and a new BEGIN on one line: a block opens after it, inside a block or not, so that
    // a reader that starts without the state before (skip_window) agrees with one from the start.
    let mut rng = Rng(28);
    let a = rng.pick(64, &b64());
    let b = rng.pick(64, &b64());
    let both = format!("-----END {PRIV}----------BEGIN {PRIV}-----\n");
    let text = format!("-----BEGIN {PRIV}-----\n{a}\n{both}{b}\n");
    let shown = redact(&text);
    assert!(!shown.contains(&a) && !shown.contains(&b), "{shown}");
    let mut r = Redactor::new();
    r.skip(text.as_bytes());
    assert!(!r.passes(b"x\n"), "skip() follows: the block is open");
    let (shown, _) = redact_with(&mut Redactor::new(), &format!("{both}{b}\n"));
    assert!(!shown.contains(&b), "{shown}");
}

#[test]
fn a_begin_line_opens_a_block_however_long_it_is_and_however_it_is_read() {
    let mut rng = Rng(26);
    let material = rng.pick(64, &b64()) + "\n";
    let hidden = format!("{}\n", mark("private-key"));
    let long_prefix = "x".repeat(70_000);
    for (prefix, pad, term) in [
        ("", 0, "\n"),
        ("", 30_000, "\n"),
        ("", 70_000, "\n"),
        ("", 1, "\r\r\n"),
        ("k = \"", 200_000, "\r\n"),
        (long_prefix.as_str(), 3, "\n"),
    ] {
        // Padding of every kind the marker may be followed by, escaped line breaks too.
        let padding: String = " \t\"',;\\n+\\r".chars().cycle().take(pad).collect();
        let begin = format!("{prefix}-----BEGIN {PRIV}-----{padding}{term}");
        let mut r = Redactor::new();
        whole(&mut r, begin.as_bytes());
        assert_eq!(whole(&mut r, material.as_bytes()), hidden.as_bytes());
        for sizes in [&[65536][..], &[4093, 7], &[MAX_MATCH + 1]] {
            let mut r = Redactor::new();
            let out = stream(&mut r, begin.as_bytes(), sizes);
            assert_eq!(out, begin.as_bytes(), "the BEGIN line itself stays");
            assert_eq!(
                whole(&mut r, material.as_bytes()),
                hidden.as_bytes(),
                "read in pieces {sizes:?}: {} bytes of padding after {} bytes",
                pad,
                prefix.len()
            );
        }
    }
    // Anything but padding after the marker, even an escape's letter without its backslash,
    // and it is not a BEGIN line.
    for after in ["x", "-----", "n", "\\nx"] {
        let begin = format!("-----BEGIN {PRIV}-----{}{after}\n", " ".repeat(70_000));
        let mut r = Redactor::new();
        whole(&mut r, begin.as_bytes());
        assert_eq!(whole(&mut r, material.as_bytes()), material.as_bytes());
        let mut r = Redactor::new();
        stream(&mut r, begin.as_bytes(), &[65536]);
        assert_eq!(whole(&mut r, material.as_bytes()), material.as_bytes());
    }
}

/// What a reader that starts at line start `w` of `text` shows, as tail does: the look-back
/// before it through skip_window, then the lines from `w`.
fn window_from(text: &[u8], w: usize) -> String {
    let from = w.saturating_sub(LOOKBACK);
    let mut r = Redactor::new();
    r.skip_window(&text[from..w], from > 0 && text[from - 1] != b'\n');
    redact_with(&mut r, std::str::from_utf8(&text[w..]).unwrap()).0
}

#[test]
fn no_window_after_a_begin_line_of_any_length_shows_key_material() {
    let mut rng = Rng(27);
    // 52 KiB of material: within the bound, so a window near the END still has it open.
    let body: Vec<String> = (0..800).map(|_| rng.pick(64, &b64())).collect();
    for pad in [0, 30_000, 70_000, 200_000] {
        let text = format!(
            "# x\n-----BEGIN {PRIV}-----{}\n{}\n-----END {PRIV}-----\n# end\n",
            // Padding as a key written in code ends its BEGIN line with: `\n" + `.
            "\\n\" + ".chars().cycle().take(pad).collect::<String>(),
            body.join("\n")
        );
        assert!(!redact(&text).contains(&body[0]));
        let starts: Vec<usize> = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .filter(|&i| i < text.len())
            .collect();
        for (k, &w) in starts.iter().enumerate() {
            if k % 23 != 0 && k + 5 < starts.len() && k > 5 {
                continue;
            }
            let shown = window_from(text.as_bytes(), w);
            for b in &body {
                assert!(!shown.contains(b), "padding {pad}, from line {k}: {b}");
            }
        }
    }
}

#[test]
fn a_window_that_starts_inside_a_long_run_of_padding_takes_it_for_a_begin_line() {
    // The look-back cannot tell the end of a BEGIN line whose padding passes MAX_LINE from any
    // other run of padding that long: it hides what follows that could be key material (when
    // unsure, hide), up to the first line of text, since the BEGIN line was only a guess.
    let mut rng = Rng(41);
    let key = rng.pick(64, &b64());
    let text = format!("x{}\n{key}\nplain 1\nplain 2\n", " ".repeat(LOOKBACK));
    let w = text.find(&key).unwrap();
    assert_eq!(
        window_from(text.as_bytes(), w),
        format!("{}\nplain 1\nplain 2\n", mark("private-key"))
    );
    // A shorter run is seen whole, and nothing is hidden.
    let text = format!("x{}\nplain 1\nplain 2\n", " ".repeat(MAX_LINE / 2));
    let w = text.find("plain 1").unwrap();
    assert_eq!(window_from(text.as_bytes(), w), "plain 1\nplain 2\n");
}

// ---------------------------------------------------------------------------------------------
// Long lines
// ---------------------------------------------------------------------------------------------

/// `line` redacted through [`LongLine`], fed in pieces of the given sizes (cycled).
fn stream(r: &mut Redactor, line: &[u8], sizes: &[usize]) -> Vec<u8> {
    let mut l = r.long_line();
    let mut out = Vec::new();
    let mut at = 0;
    let mut k = 0;
    while at < line.len() {
        let n = sizes[k % sizes.len()].max(1).min(line.len() - at);
        out.extend(l.feed(r, &line[at..at + n]));
        at += n;
        k += 1;
    }
    out.extend(l.finish(r));
    out
}

fn whole(r: &mut Redactor, line: &[u8]) -> Vec<u8> {
    match r.line(line) {
        Shown::Same => line.to_vec(),
        Shown::Replaced(v) => v,
        Shown::Hidden => Vec::new(),
    }
}

/// A long line holding secrets of every kind among filler, with `\n` at the end.
fn long_line_with_secrets(rng: &mut Rng, filler: usize) -> String {
    let mut parts = Vec::new();
    for (_, positives, negatives) in examples(rng) {
        for p in positives {
            parts.push(format!("{}{}{}", p.before, p.secret, p.after).replace('\n', " "));
        }
        parts.extend(negatives.into_iter().map(|n| n.replace('\n', " ")));
        parts.push("w".repeat(filler));
    }
    parts.concat() + "\n"
}

#[test]
fn a_long_line_in_pieces_comes_out_as_it_would_whole() {
    let mut rng = Rng(17);
    let line = long_line_with_secrets(&mut rng, 5000);
    assert!(line.len() > MAX_LINE);
    let want = whole(&mut Redactor::new(), line.as_bytes());
    assert_ne!(want, line.as_bytes());
    for sizes in [
        &[1 << 16][..],
        &[4096],
        &[1, 7, 1000, 33],
        &[MAX_MATCH],
        &[3],
    ] {
        let mut r = Redactor::new();
        let got = stream(&mut r, line.as_bytes(), sizes);
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want),
            "pieces {sizes:?}"
        );
    }
}

#[test]
fn an_open_ended_token_is_replaced_through_its_end_however_long() {
    let mut rng = Rng(18);
    let token = format!("{GHP}{}", rng.pick(200_000, &alnum()));
    let line = format!("t={token};x\n");
    let want = format!("t={};x\n", mark("github-token"));
    assert_eq!(
        whole(&mut Redactor::new(), line.as_bytes()),
        want.as_bytes()
    );
    assert_eq!(
        stream(&mut Redactor::new(), line.as_bytes(), &[65536]),
        want.as_bytes()
    );
}

#[test]
fn a_long_line_inside_a_block_is_hidden() {
    let mut rng = Rng(19);
    let mut r = Redactor::new();
    assert_eq!(
        r.line(format!("-----BEGIN {PRIV}-----\n").as_bytes()),
        Shown::Same
    );
    let material = rng.pick(100_000, &b64()) + "\n";
    let out = stream(&mut r, material.as_bytes(), &[65536]);
    assert_eq!(out, format!("{}\n", mark("private-key")).as_bytes());
    // However long, the block goes on to its END.
    assert!(!r.passes(b"more\n"));
    assert_eq!(r.line(b"more\n"), Shown::Hidden);
}

#[test]
fn an_inline_key_in_a_long_line_is_dropped_to_its_end_marker() {
    let mut rng = Rng(20);
    let a = rng.pick(50_000, &b64());
    let line = format!(
        "{}\"-----BEGIN {PRIV}-----\\n{a}\\n-----END {PRIV}-----\\n\" tail\n",
        "q".repeat(70_000)
    );
    let want = format!(
        "{}\"-----BEGIN {PRIV}-----\\n{}\\n-----END {PRIV}-----\\n\" tail\n",
        "q".repeat(70_000),
        mark("private-key")
    );
    assert_eq!(
        stream(&mut Redactor::new(), line.as_bytes(), &[4096, 9]),
        want.as_bytes()
    );
}

#[test]
fn a_token_nested_in_another_far_before_a_piece_ends_hides_the_rest_of_its_tail() {
    // A Slack token's tail (letters, digits, `-`) holds an Anthropic key's start; the key's tail
    // also takes `_`, so it runs on after the Slack tail ends. Far before a piece's end, the key
    // is not found again there: its tail is carried on as the whole line does.
    let mut rng = Rng(53);
    let after = rng.pick(40, &alnum());
    for (run, pad) in [
        (1000, 100_000),
        (3000, 65_000),
        (900, 130_000),
        (70_000, 10),
    ] {
        let core = format!(
            "token {XOXB}1-abcdef-{SKANT}{}{}_{after} end",
            rng.pick(32, &alnum()),
            rng.pick(run, &alnum())
        );
        let line = format!("{}{core}\n", " ".repeat(pad));
        let want = whole(&mut Redactor::new(), line.as_bytes());
        assert!(!String::from_utf8_lossy(&want).contains(&after));
        for sizes in [&[MAX_LINE][..], &[4096], &[1000, 333]] {
            let got = stream(&mut Redactor::new(), line.as_bytes(), sizes);
            assert!(
                got == want,
                "run {run}, pad {pad}, pieces {sizes:?}: {}",
                String::from_utf8_lossy(&got[got.len().saturating_sub(200)..])
            );
        }
    }
}

#[test]
fn a_match_that_starts_inside_a_secret_of_its_own_rule_goes_too() {
    let mut rng = Rng(47);
    let first = format!("{}7{}", rng.pick(12, &alnum()), rng.pick(12, &alnum()));
    let second = format!("{}3{}", rng.pick(12, &alnum()), rng.pick(12, &alnum()));
    // The first credential's tail runs on over `=authorization:`, where the second header's
    // match starts; its credential lies after the tail.
    let line = format!("Authorization: Bearer {first}=authorization: Bearer {second}\n");
    let shown = redact(&line);
    assert!(
        !shown.contains(&second) && !shown.contains(&first),
        "{shown}"
    );
}

#[test]
fn a_secret_whose_match_starts_in_a_long_tokens_tail_goes_in_every_piece() {
    // A token's tail that fills whole pieces, then, inside it, the start of another match
    // whose secret follows the tail: an access key id and its secret key.
    let mut rng = Rng(43);
    let id = format!("{AKIA}{}", rng.pick(16, &b32()));
    let key = format!("wJ{}K7", rng.pick(36, &b64()));
    for tail in [
        131_072 - 43,
        131_072 - 21,
        2 * MAX_LINE + 5,
        3 * MAX_LINE - 30,
    ] {
        let line = format!(
            "Authorization: Bearer {}={id} {key} end\n",
            rng.pick(tail, &alnum())
        );
        let want = whole(&mut Redactor::new(), line.as_bytes());
        assert!(!String::from_utf8_lossy(&want).contains(&key[..20]));
        for sizes in [&[MAX_LINE][..], &[4096], &[MAX_LINE, 7], &[1000, 333]] {
            let got = stream(&mut Redactor::new(), line.as_bytes(), sizes);
            assert!(got == want, "tail {tail}, pieces {sizes:?}");
        }
    }
}

/// A line of the examples' secrets and look-alikes in random order, some of them inside or
/// right after long runs of token characters (an open-ended token's tail that fills pieces),
/// joined by separators that end tokens or not.
fn line_of_long_tails(rng: &mut Rng, picks: &[(usize, usize, usize)]) -> String {
    let mut texts = Vec::new();
    for (_, positives, negatives) in examples(rng) {
        texts.extend(
            positives
                .into_iter()
                .map(|p| format!("{}{}{}", p.before, p.secret, p.after)),
        );
        texts.extend(negatives);
    }
    let seps = [" ", "=", "", "\\n", ",", "\"", "%3D", "_", "."];
    // Where an open-ended token starts, whose tail the run continues.
    let heads = [
        "Authorization: Bearer ".to_string(),
        GHP.to_string(),
        format!("{XOXB}123-"),
        "x ".to_string(),
        // Tokens nested in a token whose tail class is narrower than theirs.
        format!("{XOXB}1-abcdef-{SKANT}{}", rng.pick(32, &alnum())),
        format!("{XOXB}1-abcdef-{SKPROJ}{}", rng.pick(40, &alnum())),
        format!(
            "{PYPI}{}-{GLPAT}{}",
            rng.pick(50, &alnum()),
            rng.pick(20, &alnum())
        ),
    ];
    let mut line = String::new();
    for &(text, run, sep) in picks {
        if run > 0 {
            line += &heads[text % heads.len()];
            line += &rng.pick(run, &alnum());
            line += seps[sep % seps.len()];
        }
        line += &texts[text % texts.len()].replace(['\n', '\r'], " ");
        line += seps[(sep / 7) % seps.len()];
    }
    line + "\n"
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    #[test]
    fn any_split_of_a_line_redacts_it_as_the_whole_line_does(
        seed in 1u64..u64::MAX,
        filler in 0usize..400,
        sizes in proptest::collection::vec(1usize..5000, 1..6),
    ) {
        let mut rng = Rng(seed);
        let line = long_line_with_secrets(&mut rng, filler);
        let want = whole(&mut Redactor::new(), line.as_bytes());
        let got = stream(&mut Redactor::new(), line.as_bytes(), &sizes);
        proptest::prop_assert_eq!(got, want);
    }
    #[test]
    fn a_line_of_long_token_tails_in_pieces_redacts_as_whole(
        seed in 1u64..u64::MAX,
        picks in proptest::collection::vec(
            (0usize..1000, proptest::prop_oneof![proptest::strategy::Just(0usize), 1usize..200, 60_000usize..140_000], 0usize..49),
            2..8,
        ),
        sizes in proptest::collection::vec(1usize..70_000, 1..4),
    ) {
        let mut rng = Rng(seed);
        let line = line_of_long_tails(&mut rng, &picks);
        let want = whole(&mut Redactor::new(), line.as_bytes());
        let got = stream(&mut Redactor::new(), line.as_bytes(), &sizes);
        proptest::prop_assert!(got == want, "pieces {:?}", sizes);
    }
}

// ---------------------------------------------------------------------------------------------
// The tally, the note and grep's helpers
// ---------------------------------------------------------------------------------------------

#[test]
fn the_note_says_how_many_values_and_which_rules_and_nothing_of_them() {
    let mut rng = Rng(21);
    let toks: Vec<String> = (0..3)
        .map(|_| format!("{GHP}{}", rng.pick(36, &alnum())))
        .collect();
    let jwt = fake_jwt(&mut rng);
    let text = format!("a {}\nb {}\nc {}\nd {jwt}\n", toks[0], toks[1], toks[2]);
    let (_, tally) = redact_with(&mut Redactor::new(), &text);
    let note = tally.note().unwrap();
    assert_eq!(
        note,
        "redacted 4 secret values (github-token 3, jwt 1); each reads [REDACTED:RULE]"
    );
    for t in toks.iter().chain([&jwt]) {
        assert!(!note.contains(&t[..6]) && !note.contains(&t[t.len() - 4..]));
    }
    let (_, one) = redact_with(&mut Redactor::new(), &format!("x {}\n", toks[0]));
    assert_eq!(
        one.note().unwrap(),
        "redacted 1 secret value (github-token 1); each reads [REDACTED:RULE]"
    );
}

#[test]
fn tallies_add_up_across_streams() {
    let mut rng = Rng(22);
    let (_, a) = redact_with(
        &mut Redactor::new(),
        &format!("{NPM}{}\n", rng.pick(36, &alnum())),
    );
    let (_, b) = redact_with(
        &mut Redactor::new(),
        &format!(
            "{NPM}{} {AKIA}{}\n",
            rng.pick(36, &alnum()),
            rng.pick(16, &b32())
        ),
    );
    let mut sum = Tally::default();
    sum.add(&a);
    sum.add(&b);
    assert_eq!(sum.total(), 3);
    assert_eq!(
        sum.by_rule().collect::<Vec<_>>(),
        vec![("aws-access-key-id", 1), ("npm-token", 2)]
    );
}

#[test]
fn discard_last_takes_back_the_last_lines_count() {
    let mut rng = Rng(23);
    let mut r = Redactor::new();
    let a = format!("{NPM}{}\n", rng.pick(36, &alnum()));
    assert!(matches!(r.line(a.as_bytes()), Shown::Replaced(_)));
    assert!(matches!(r.line(a.as_bytes()), Shown::Replaced(_)));
    r.discard_last();
    assert_eq!(r.tally().total(), 1);
    assert_eq!(r.line(b"plain\n"), Shown::Same);
    r.discard_last();
    assert_eq!(r.tally().total(), 1);
}

#[test]
fn only_patterns_that_touch_a_marker_may_match_redacted_text_alone() {
    for (p, ic, want) in [
        ("REDACTED", false, true),
        ("redacted", true, true),
        ("redacted", false, false),
        ("private-key]", false, true),
        ("[", false, true),
        ("x]", false, true),
        ("", false, true),
        ("TED:aws", false, true),
        ("token", false, true),
        ("password", false, true),
        ("fn main", false, false),
        ("AKIA", false, false),
        ("k\u{212A}y", true, true),
        ("key", false, true),
        ("keyz", false, false),
    ] {
        assert_eq!(may_match_marker(p.as_bytes(), ic), want, "{p:?} {ic}");
    }
}
