//! The rules of the detector, as data: one table, one entry per credential family
//! (docs/contract.md#redaction).
//!
//! Each rule names the literal keywords of which one must occur in a match (compared as written,
//! or ignoring ASCII case where the pattern does; the prefilter finds them), its pattern, the capture group that is the secret,
//! what else a match must satisfy, and the bytes over which the secret runs on after the
//! pattern's end. The formats were learnt from the public rule documentation of gitleaks
//! (`config/gitleaks.toml`) and detect-secrets (its plugin list); the source of each rule is
//! given beside it.
//!
//! Invariants that the tests check: every pattern compiles; every match contains one of its
//! rule's keywords, or for a rule of a name/value pair over two lines every match of its name
//! pattern does (so a text without any keyword needs no pattern at all); every match is at
//! most [`MAX_MATCH`] bytes long (bounded repetitions only, so a long line can be redacted as
//! a stream that holds back exactly that many bytes); and rule ids hold no digit (the note
//! counts values with numbers). A family found in two forms has two entries under one id,
//! next to each other.

use regex::bytes::CaptureLocations;

/// The longest match of any rule's pattern, in bytes (the URL password rule's).
///
/// A stream of one line holds back twice this many bytes before it shows anything: a match that
/// starts before them is already whole, and so is any match that starts before that match's secret.
pub const MAX_MATCH: usize = 549;

/// One credential family.
pub struct Rule {
    /// The id in `[REDACTED:ID]`: lowercase ASCII letters and `-`.
    pub id: &'static str,
    /// Literals of which every match of `pattern` (of `name`, when that is set) contains at least
    /// one: as written, or in any ASCII case when `any_case` is set (then they are written in
    /// lowercase).
    pub keywords: &'static [&'static str],
    /// Whether the pattern ignores case where a keyword occurs, so that the keywords are
    /// compared ignoring ASCII case. Most credential formats fix the case of their prefix
    /// (`AKIA`, `ghp_`), and a keyword compared as written is rarer in ordinary text.
    pub any_case: bool,
    /// A pattern that a whole line (without its terminator) must match for `pattern` to be
    /// looked for, only at the start of the line right after it: a name/value pair written over
    /// two lines (Kubernetes' `- name: AWS_SECRET_ACCESS_KEY` then `value: …`). The keywords are
    /// then those of the name line, and the match of `pattern` holds none.
    pub name: Option<&'static str>,
    /// The pattern (`regex` syntax, matched on bytes with Unicode off: classes are ASCII).
    pub pattern: &'static str,
    /// The capture group that is the secret (0: the whole match); the rest of the match is
    /// shown.
    pub secret: usize,
    /// What a match must also satisfy (placeholders and examples are not secrets).
    pub accept: fn(&Groups<'_>) -> bool,
    /// The secret runs on over the bytes that follow the match and are of this class (tokens
    /// whose length is open-ended), so the bound on the pattern never shows a secret's tail.
    pub tail: Option<fn(u8) -> bool>,
    /// Whether the secret is a private key's material on one line (`-----BEGIN … PRIVATE
    /// KEY-----` and text after it on the same line): it runs on to `-----END` or 64 KiB.
    pub inline_key: bool,
    /// Whether a match must start a token (`starts_token`): a prefixed token's start, in place
    /// of a leading `\b`, which an escape written before the token (`\n` in JSON) would fail.
    pub token_start: bool,
}

/// Whether a token may start at `at` in `hay`: at the start, after a byte that is not a
/// letter, digit or `_` (a word boundary, as `\b`), or right after an escape or encoding that
/// ends in one, where text would hold a space or a line break:
/// - the escapes of JSON, C, Python and shell strings: `\n`, `\t`, `\r`, `\a`, `\b`, `\e`, `\f`,
///   `\v`, `\0`, octal `\12` and `\012`, `\xHH`, `\uHHHH`, `\UHHHHHHHH`, and caret notation
///   (`^M`);
/// - percent-encoding (RFC 3986) `%HH`, encoded twice `%25HH`, and `%uHHHH`; quoted-printable
///   (RFC 2045) `=HH` in capitals (`=3D`);
/// - a terminal's control sequences (ECMA-48: `ESC[32m`, `ESC[0K`), as CI logs hold them, also
///   written out (`\e[`, `\033[`, `\x1b[`, `\u001b[`, `^[[`).
///
/// A JSON log line `"keys:\nAKIA…"`, a URL's `?next=%3Ftoken%3Dghp_…` or a coloured
/// `GH_TOKEN=ESC[32mghp_…` holds a token as plainly as a space would.
pub fn starts_token(hay: &[u8], at: usize) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let before = &hay[..at];
    let Some(&last) = before.last() else {
        return true;
    };
    if !word(last) {
        return true;
    }
    let hex = |s: &[u8]| s.iter().all(u8::is_ascii_hexdigit);
    let ends =
        |n: usize, f: &dyn Fn(&[u8]) -> bool| before.len() >= n && f(&before[before.len() - n..]);
    ends(2, &|e| e[0] == b'\\' && b"nrtabefv0".contains(&e[1]))
        || ends(2, &|e| e[0] == b'^' && e[1].is_ascii_uppercase())
        || ends(3, &|e| e[0] == b'%' && hex(&e[1..]))
        || ends(3, &|e| {
            e[0] == b'='
                && e[1..]
                    .iter()
                    .all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(b))
        })
        || (2..=4).any(|n| {
            ends(n, &|e| {
                e[0] == b'\\' && e[1..].iter().all(|b| (b'0'..=b'7').contains(b))
            })
        })
        || ends(4, &|e| e.starts_with(b"\\x") && hex(&e[2..]))
        || ends(5, &|e| e.starts_with(b"%25") && hex(&e[3..]))
        || ends(6, &|e| {
            (e.starts_with(b"\\u") || e.starts_with(b"%u")) && hex(&e[2..])
        })
        || ends(10, &|e| e.starts_with(b"\\U") && hex(&e[2..]))
        || after_colour_code(before)
}

/// Whether `before` ends with a terminal's control sequence (ECMA-48 CSI: `ESC[`, parameters of
/// digits and `;`, and a final letter: `m` for colours, `K` to erase a line, as CI logs hold
/// them), the escape byte itself or written out (`\e`, `\E`, `\033`, `\27`, `\x1b`, `\u001b`,
/// or `^[` as `cat -v` shows it).
fn after_colour_code(before: &[u8]) -> bool {
    let Some((&last, body)) = before.split_last() else {
        return false;
    };
    if !last.is_ascii_alphabetic() {
        return false;
    }
    let params = body
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit() || **b == b';')
        .count();
    let Some(intro) = body[..body.len() - params].strip_suffix(b"[") else {
        return false;
    };
    params <= 16
        && [
            &b"\x1b"[..],
            b"\\e",
            b"\\E",
            b"\\033",
            b"\\27",
            b"^[",
            b"\\x1b",
            b"\\x1B",
            b"\\u001b",
            b"\\u001B",
        ]
        .iter()
        .any(|e| intro.ends_with(e))
}

/// The capture groups of one match (only the whole match, group 0, for a rule whose secret
/// is the whole match: those are found without the capture engine).
pub struct Groups<'h> {
    pub(crate) hay: &'h [u8],
    pub(crate) whole: (usize, usize),
    pub(crate) locs: Option<&'h CaptureLocations>,
}

impl<'h> Groups<'h> {
    /// Group `i`, if it took part in the match.
    pub fn get(&self, i: usize) -> Option<&'h [u8]> {
        let (s, e) = match i {
            0 => self.whole,
            _ => self.locs?.get(i)?,
        };
        Some(&self.hay[s..e])
    }
}

/// Tokens of letters and digits.
fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// Tokens of letters, digits, `_` and `-` (URL-safe base64 and friends).
fn urlsafe(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// GitLab's newer routable tokens also hold dots.
fn urlsafe_dot(b: u8) -> bool {
    urlsafe(b) || b == b'.'
}

/// A JSON Web Token: URL-safe base64 segments joined by dots.
fn jwt(b: u8) -> bool {
    urlsafe_dot(b)
}

/// Standard base64 without padding.
fn base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/'
}

/// Slack tokens: letters, digits and `-`.
fn alnum_dash(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

/// An HTTP credential (RFC 9110 token68), and `:` for the `user:password` some write unencoded.
fn token68(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~+/=:".contains(&b)
}

fn always(_: &Groups<'_>) -> bool {
    true
}

/// A key's material after its marker on the same line, unless a placeholder that repeats one
/// character (`-----BEGIN PRIVATE KEY-----\nXXXX\nXXXX\n…`). Where the marker's string
/// literal ends before it (`"-----BEGIN …-----", "MII…"`: one array, or a sum of strings), the
/// material must start with 16 base64 characters or a key's header, so that a line of marker
/// constants
/// (`{"rsa": "-----BEGIN RSA PRIVATE KEY-----", "ec": …}`) stays.
fn inline_key(g: &Groups<'_>) -> bool {
    let material = &g.hay[g.whole.1 - 1..];
    let run = material
        .iter()
        .take(64)
        .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
        .count();
    if run >= 2 && material[..run].iter().all(|&b| b == material[0]) {
        return false;
    }
    let separator = g.get(0).unwrap_or_default().rsplit(|&b| b == b'-').next();
    let closed = separator.is_some_and(|s| s.iter().any(|&b| matches!(b, b'"' | b'\'')));
    // An encrypted key's first string is its header.
    let header = [&b"Proc-Type:"[..], b"Version:", b"Comment:"]
        .iter()
        .any(|h| material.starts_with(h));
    !closed || run >= 16 || header
}

/// Holds both a letter and a digit: random tokens do, words and identifiers mostly not.
fn mixed(s: &[u8]) -> bool {
    s.iter().any(u8::is_ascii_digit) && s.iter().any(u8::is_ascii_alphabetic)
}

/// Looks like random base64 letters and digits: it holds a letter and a digit ([`mixed`]), or,
/// with no digit (one random AWS secret key in a thousand), both cases side by side as random
/// letters put them: at least three places where two capitals follow each other and three
/// where two small letters do (98% of random 40-letter strings, 97% of 36-letter ones). A
/// placeholder in one case has no such pairs of capitals, nor has a name or a path in camel case
/// (`awsSecretAccessKeyFromVault…`), whose capitals start words; acronyms can give one three
/// (`…/RDSCredentials`), so this serves only where the value has a key's exact length after a
/// name that says it is one (AWS secret keys, npm tokens), not for free-form values.
fn random_b64(s: &[u8]) -> bool {
    let pairs = |f: fn(&u8) -> bool| s.windows(2).filter(|w| f(&w[0]) && f(&w[1])).count();
    mixed(s) || (pairs(u8::is_ascii_uppercase) >= 3 && pairs(u8::is_ascii_lowercase) >= 3)
}

/// AWS documents its example credentials with `EXAMPLE` in them (`AKIA…EXAMPLE`).
fn not_example(s: &[u8]) -> bool {
    !s.windows(7).any(|w| w == b"EXAMPLE")
}

fn aws_access_key_id(g: &Groups<'_>) -> bool {
    g.get(0).is_some_and(not_example)
}

fn aws_secret(g: &Groups<'_>) -> bool {
    g.get(1).is_some_and(aws_secret_key)
}

/// Whether `s`, 40 characters of base64 after a name that says it is one, is an AWS secret key:
/// it looks random and is not AWS's documented example.
fn aws_secret_key(s: &[u8]) -> bool {
    random_b64(s) && not_example(s)
}

/// A key after an access key id needs no name to say what it is, but must look like one: random
/// base64 holds capitals and small letters (all but one key in a billion), which a SHA-1 in hex
/// does not.
fn aws_secret_after_id(g: &Groups<'_>) -> bool {
    g.get(1).is_some_and(|s| {
        random_b64(s)
            && s.iter().any(u8::is_ascii_uppercase)
            && s.iter().any(u8::is_ascii_lowercase)
            && not_example(s)
    })
}

/// An AWS secret key in base64 (a Kubernetes Secret's `data`): it decodes to 40 characters of
/// base64 that [`aws_secret_key`] takes, maybe followed by the newline that `echo KEY | base64`
/// encodes too.
fn aws_secret_base64(g: &Groups<'_>) -> bool {
    g.get(1).and_then(decode_base64).is_some_and(|k| {
        let k = k.strip_suffix(b"\n").unwrap_or(&k);
        k.len() == 40
            && k.iter()
                .all(|&b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
            && aws_secret_key(k)
    })
}

/// `text` decoded as standard base64 (RFC 4648: `A`-`Z`, `a`-`z`, `0`-`9`, `+`, `/`, padded with
/// `=` to a multiple of four characters), or `None` when it is not; the bits that padding leaves
/// over are not checked.
fn decode_base64(text: &[u8]) -> Option<Vec<u8>> {
    let value = |b: u8| match b {
        b'A'..=b'Z' => Some(b - b'A'),
        b'a'..=b'z' => Some(b - b'a' + 26),
        b'0'..=b'9' => Some(b - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    if !text.len().is_multiple_of(4) {
        return None;
    }
    let body = text
        .strip_suffix(b"==")
        .or_else(|| text.strip_suffix(b"="))
        .unwrap_or(text);
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for &b in body {
        acc = acc << 6 | u32::from(value(b)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

fn npm(g: &Groups<'_>) -> bool {
    // What follows `npm_`.
    g.get(0)
        .and_then(|s| s.get(b"npm_".len()..))
        .is_some_and(random_b64)
}

/// The password of a URL, unless it is a placeholder: a template (`${DB_PASS}`, `{{pw}}`,
/// `%s`), a mask (`****`, `xxxx`), or a word that stands for one (`password`); or a CVS root's
/// access method (`cvs://:pserver:anoncvs@host`).
fn url_password(g: &Groups<'_>) -> bool {
    let Some(p) = g.get(3) else { return false };
    const WORDS: &[&[u8]] = &[
        b"password",
        b"passwd",
        b"pass",
        b"pwd",
        b"secret",
        b"changeme",
        b"example",
        b"pw",
    ];
    let templated = template(p);
    let masked = p
        .iter()
        .all(|&b| matches!(b, b'*' | b'x' | b'X' | b'.' | b'#'));
    let word = WORDS.iter().any(|w| p.eq_ignore_ascii_case(w));
    // CVS's `:pserver:user@host` (also `:ext:`, `:ssh:`) is an access method, not a password.
    const CVS: &[&[u8]] = &[
        b"pserver:",
        b"ext:",
        b"extssh:",
        b"ssh:",
        b"gserver:",
        b"kserver:",
        b"server:",
        b"fork:",
        b"local:",
    ];
    let cvs = g.get(2).is_some_and(<[u8]>::is_empty) && CVS.iter().any(|m| p.starts_with(m));
    !(templated || masked || word || cvs)
}

/// A byte a URL's password may hold (as the pattern takes it), past the pattern's bound.
fn url_password_char(b: u8) -> bool {
    !(b.is_ascii_whitespace()
        || matches!(b, b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>' | b'@'))
}

/// Whether a URL's password is a placeholder filled in later, as a whole: `${…}` and `$(…)`
/// (shell, Compose), `{{…}}` (Jinja, Go), `$NAME` in capitals, `%s` and `%(name)s` (printf,
/// Python), and a name without digits in braces, brackets or parentheses (`{password}`,
/// `[DB_PASS]`). A password that merely starts with one of those characters (`$uperS3cret`,
/// `(Hunter2)`, `%sHunter2`) is a password.
fn template(p: &[u8]) -> bool {
    let name = |s: &[u8]| {
        !s.is_empty()
            && s.iter()
                .all(|&b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'.' | b'-'))
    };
    let capitals = |s: &[u8]| {
        s.first()
            .is_some_and(|&b| b.is_ascii_uppercase() || b == b'_')
            && s.iter()
                .all(|&b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    };
    match p {
        [b'$', b'{', .., b'}'] | [b'$', b'(', .., b')'] | [b'{', b'{', .., b'}', b'}'] => true,
        [b'{', inner @ .., b'}'] | [b'[', inner @ .., b']'] | [b'(', inner @ .., b')'] => {
            name(inner)
        }
        [b'$', rest @ ..] => capitals(rest),
        [b'%', b's'] => true,
        [b'%', b'(', inner @ .., b')', b's'] => name(inner),
        _ => false,
    }
}

/// An `Authorization` value: after `Basic` (and the other schemes whose value is an encoding
/// of a credential) anything is one; otherwise it must look random (a letter and a digit), so
/// that prose (`Authorization: required`) and placeholders (`Bearer YOUR_TOKEN`) stay. The
/// pattern takes the first 64 characters of the value, which is where this looks. Group 1
/// takes part when the name is followed by a comma and another string: that is a header set
/// in code only with a scheme word (a list of header names, `["authorization",
/// "x-amz-content-sha256"]`, is not). Group 2 takes part when the value is assigned unquoted
/// (`AUTHORIZATION=Bearer …`) or encoded in a URL (`authorization=Bearer%20…`,
/// `Authorization%3A%20Bearer%20…`): a value there counts only after a scheme word.
fn authorization(g: &Groups<'_>) -> bool {
    if (g.get(1).is_some() || g.get(2).is_some()) && g.get(3).is_none() {
        return false;
    }
    let value_at = g.locs.and_then(|l| l.get(4)).map_or(g.whole.1, |(s, _)| s);
    name_starts(g.hay, g.whole.0)
        // A constant's name stands alone: after a scheme word the value is a credential.
        && (g.get(3).is_some() || !constant_name(&g.hay[value_at..]))
        && !signed_request(g.get(4))
        && credential(g.get(3), g.get(4))
}

/// Whether `text` starts with a constant's name in code (`WINBIO_PRESENCE_0`, an enum's variant
/// in a Rust or C declaration `pub Authorization: WINBIO_PRESENCE_0,`): capitals and digits in
/// words joined by `_`, then nothing that a token holds.
fn constant_name(text: &[u8]) -> bool {
    let n = text
        .iter()
        .take_while(|&&b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        .count();
    let name = &text[..n];
    name.first().is_some_and(u8::is_ascii_uppercase)
        && name.contains(&b'_')
        && !text.get(n).is_some_and(|&b| token68(b) || b == b'_')
}

/// Whether an `Authorization` value is one of AWS Signature Version 4's schemes
/// (`AWS4-HMAC-SHA256 Credential=AKID…/scope, SignedHeaders=…, Signature=…`, and SigV4a's
/// `AWS4-ECDSA-P256-SHA256`): the scheme word stays, and what follows names a key id and signs
/// one request; it is no credential to reuse.
fn signed_request(value: Option<&[u8]>) -> bool {
    value.is_some_and(|v| {
        [&b"AWS4-HMAC-SHA256"[..], b"AWS4-ECDSA-P256-SHA256"]
            .iter()
            .any(|scheme| v.len() >= scheme.len() && v[..scheme.len()].eq_ignore_ascii_case(scheme))
    })
}

/// Whether the `Authorization` name at `at` in `hay` is the word itself or ends a name after
/// `_` or a `proxy` that starts where the name may (`HTTP_AUTHORIZATION`, `proxyAuthorization`,
/// not `AggregationProxyAuthorization`), as a token starts
/// ([`starts_token`]), and not the end of a longer word (`AggregationAuthorization`). Checked
/// here rather than in the pattern, which then starts with the literal name that the regex
/// engine looks for first.
fn name_starts(hay: &[u8], at: usize) -> bool {
    let before = &hay[..at];
    let proxy = before.len() >= 5
        && before[before.len() - 5..].eq_ignore_ascii_case(b"proxy")
        && name_starts(hay, at - 5);
    starts_token(hay, at) || before.ends_with(b"_") || proxy
}

/// An `Authorization` value on the line after its name ([`authorization`]'s test): group 1 is
/// the scheme word, group 2 the credential.
fn authorization_value(g: &Groups<'_>) -> bool {
    credential(g.get(1), g.get(2))
}

/// Whether `value` after `scheme` is a credential: anything after a scheme whose value encodes
/// one (`Basic`, `Negotiate`, `NTLM`), else a value that holds a letter and a digit
/// ([`mixed`]).
fn credential(scheme: Option<&[u8]>, value: Option<&[u8]>) -> bool {
    let encoded = scheme.is_some_and(|s| {
        [&b"basic"[..], b"negotiate", b"ntlm"]
            .iter()
            .any(|w| s.eq_ignore_ascii_case(w))
    });
    encoded || value.is_some_and(|v| mixed(v) && (scheme.is_some() || !property_access(v)))
}

/// Whether `value` reads as code that takes a property (`o1.accessToken`, as minified
/// JavaScript writes `headers:{Authorization:o1.accessToken}`): identifiers joined by dots, the
/// last of them without a digit. A token with dots (a JWT, `SG.…`) ends in random characters.
fn property_access(value: &[u8]) -> bool {
    let ident = |s: &[u8]| {
        s.first()
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
            && s.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
    };
    let mut parts = value.split(|&b| b == b'.');
    let last = value.rsplit(|&b| b == b'.').next().unwrap_or_default();
    value.contains(&b'.') && parts.all(ident) && !last.iter().any(u8::is_ascii_digit)
}

/// The names that say a value is an AWS secret access key: `aws_secret_access_key`,
/// `SecretAccessKey`, `secret_key` (Terraform's AWS provider, MinIO) and the like, matched in any
/// case inside a longer name, and the word `secret` alone (Terraform's state of an
/// `aws_iam_access_key`, `"secret": "…"`).
macro_rules! aws_secret_name {
    () => {
        r"aws[A-Za-z0-9_.-]{0,20}secret[A-Za-z0-9_.-]{0,20}|secret[_.-]?access[_.-]?key[A-Za-z0-9_.-]{0,10}|secret[_.-]?key|\bsecret\b"
    };
}

/// An AWS secret access key's 40 characters of base64 as capture group 1, and the byte after
/// them: a `/` may be escaped (`\/`, as PHP writes JSON), and `/` and `+` may be
/// percent-encoded (a URL's query).
macro_rules! aws_secret_value {
    () => {
        r"((?:[A-Za-z0-9+]|\\?/|%2[BbFf]){40})(?:[^A-Za-z0-9/+=%\\]|\\[^/]|$)"
    };
}

/// One blank between an `Authorization` header's parts, as it is written or escaped: a space,
/// a tab, `\t`, `\u0020`, `%20` (also encoded twice, `%2520`) or a no-break space in UTF-8.
macro_rules! gap {
    () => {
        r"(?:[ \t]|\\t|\\u0020|%(?:25)?20|\xC2\xA0)"
    };
}

/// The pattern of a whole name line of a name/value pair ([`Rule::name`]), anchored at both ends
/// and ignoring ASCII case: indentation, YAML's list dash, the `name` (or `key`) field, quoted or
/// not, a `:`, and then one of the names given, quoted or not, and maybe a comma (Kubernetes,
/// CloudFormation, ECS task definitions and HAR files in JSON, Postman collections), and maybe a
/// short YAML comment (`- name: AWS_SECRET_ACCESS_KEY  # prod`).
macro_rules! name_line {
    ($($name:expr),+) => {
        concat!(
            r#"(?i)^[ \t]{0,64}(?:-[ \t]{1,8})?["']?(?:name|key)["']?[ \t]{0,8}:[ \t]{0,8}["']?(?:"#,
            $($name),+,
            r#")["']?[ \t]{0,8},?(?:[ \t]{1,8}#[^\r\n]{0,48}|[ \t]{0,8})$"#
        )
    };
}

/// The pattern of a value line of a name/value pair, anchored at the line's start: indentation,
/// the `value` field (in any ASCII case), quoted or not, a `:`, maybe a quote, and then the
/// pattern given, which is the value.
macro_rules! value_line {
    ($value:expr) => {
        concat!(
            r#"^[ \t]{0,64}["']?(?i:value)["']?[ \t]{0,8}:[ \t]{0,8}["']?"#,
            $value
        )
    };
}

/// Private-key material: always a secret.
const KEY: &str = "private-key";

/// The number of rules in [`RULES`].
pub const RULE_COUNT: usize = 23;

/// The rules, in priority order: when two secrets start and end at the same bytes and their
/// matches start at the same byte, the earlier rule names the marker.
pub static RULES: [Rule; RULE_COUNT] = [
    // An AWS access key id: a four-character prefix that names the kind of key, then 16
    // characters of base32. gitleaks `aws-access-token`; detect-secrets `AWSKeyDetector`.
    Rule {
        id: "aws-access-key-id",
        keywords: &["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
        any_case: false,
        name: None,
        pattern: r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b",
        secret: 0,
        accept: aws_access_key_id,
        tail: None,
        inline_key: false,
        token_start: true,
    },
    // An AWS secret access key: 40 characters of base64 after a name that says what it is:
    // `aws_secret_access_key =`, `AWS_SECRET_ACCESS_KEY="…"`, `"SecretAccessKey": "…"`, or a
    // name that ends in `secret_key` (Terraform's AWS provider, MinIO, Hadoop's
    // `fs.s3a.secret.key`, .NET's `"SecretKey"`). The value follows `=`, `:`, `>` (an XML element,
    // as STS answers), a name/value pair's `, "value":` (ECS, Kubernetes and CloudFormation
    // in JSON: `{"name": "AWS_SECRET_ACCESS_KEY", "value": "…"}`) or plain spaces (the
    // AWS command line's `--aws-secret-access-key KEY`), its quotes may be escaped (JSON inside
    // a string), a `/` in it may be escaped (`\/`, as PHP writes JSON), and `/` and `+` may be
    // percent-encoded (a URL's query).
    // detect-secrets `AWSKeyDetector` (a secret key next to an aws-named key); gitleaks
    // documents the same 40-character shape.
    Rule {
        id: "aws-secret-access-key",
        keywords: &["secret"],
        any_case: true,
        name: None,
        pattern: concat!(
            "(?i:",
            aws_secret_name!(),
            r#")\\?["']?(?:[ \t]{0,32}(?::=|=>|:|=|>)[ \t]{0,32}|[ \t]{1,32}|[ \t]{0,8},[ \t]{0,8}\\?["']?(?i:value)\\?["']?[ \t]{0,8}[:=][ \t]{0,8})\\?["']?"#,
            aws_secret_value!()
        ),
        secret: 1,
        accept: aws_secret,
        tail: None,
        inline_key: false,
        token_start: false,
    },
    // An AWS secret access key right after its access key id, as the IAM console's CSV files
    // hold them (`AKIA…,KEY`) and as they are pasted in pairs (`AKIA… KEY`, `["AKIA…", "KEY"]`):
    // the id goes by the first rule, the key by this one. gitleaks and detect-secrets document
    // the pair's shapes (`aws-access-token`, `AWSKeyDetector`).
    Rule {
        id: "aws-secret-access-key",
        keywords: &["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
        any_case: false,
        name: None,
        pattern: r#"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\\?["']?(?:[ \t]{0,8}[,;|:=][ \t]{0,8}|[ \t]{1,8})\\?["']?([A-Za-z0-9+/]{40})(?:[^A-Za-z0-9/+=]|$)"#,
        secret: 1,
        accept: aws_secret_after_id,
        tail: None,
        inline_key: false,
        token_start: true,
    },
    // An AWS secret access key as the value of a name/value pair over two lines: Kubernetes'
    // `env` (`- name: AWS_SECRET_ACCESS_KEY`, then `value: KEY`), CloudFormation's `Name` and
    // `Value`, and the same pairs in pretty-printed JSON (ECS task definitions). The names are
    // the first entry's (also at the end of a longer name, `MINIO_SECRET_KEY`). detect-secrets
    // `AWSKeyDetector`; gitleaks documents the key's shape.
    Rule {
        id: "aws-secret-access-key",
        keywords: &["secret"],
        any_case: true,
        name: Some(name_line!(
            r"[A-Za-z0-9_.-]{0,32}(?:",
            aws_secret_name!(),
            ")"
        )),
        pattern: value_line!(aws_secret_value!()),
        secret: 1,
        accept: aws_secret,
        tail: None,
        inline_key: false,
        token_start: false,
    },
    // An AWS secret access key in base64 after its name, as a Kubernetes Secret's `data` holds
    // it (`aws_secret_access_key: <56 characters>`): the names are the first entry's, and the
    // value must decode to a key, or to a key and a newline (`echo KEY | base64`).
    // detect-secrets `AWSKeyDetector` (the key's name and shape).
    Rule {
        id: "aws-secret-access-key",
        keywords: &["secret"],
        any_case: true,
        name: None,
        pattern: concat!(
            "(?i:",
            aws_secret_name!(),
            r#")\\?["']?[ \t]{0,32}[:=][ \t]{0,32}\\?["']?"#,
            r"([A-Za-z0-9+/]{54}==|[A-Za-z0-9+/]{55}=)(?:[^A-Za-z0-9/+=]|$)"
        ),
        secret: 1,
        accept: aws_secret_base64,
        tail: None,
        inline_key: false,
        token_start: false,
    },
    // GitHub personal access (ghp_), OAuth (gho_), user-to-server (ghu_), server-to-server
    // (ghs_) and refresh (ghr_) tokens: the prefix and 36 letters or digits. gitleaks
    // `github-pat`, `github-oauth`, `github-app-token`, `github-refresh-token`; detect-secrets
    // `GitHubTokenDetector`.
    Rule {
        id: "github-token",
        keywords: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        any_case: false,
        name: None,
        pattern: r"gh[pousr]_[A-Za-z0-9]{36}",
        secret: 0,
        accept: always,
        tail: Some(alnum),
        inline_key: false,
        token_start: true,
    },
    // A GitHub fine-grained personal access token: github_pat_ and 82 word characters.
    // gitleaks `github-fine-grained-pat`.
    Rule {
        id: "github-fine-grained-token",
        keywords: &["github_pat_"],
        any_case: false,
        name: None,
        pattern: r"github_pat_[A-Za-z0-9_]{82}",
        secret: 0,
        accept: always,
        tail: Some(|b| b.is_ascii_alphanumeric() || b == b'_'),
        inline_key: false,
        token_start: true,
    },
    // GitLab personal (glpat-), deploy (gldt-), pipeline trigger (glptt-) and runner (glrt-)
    // tokens: the prefix and at least 20 characters. gitleaks `gitlab-pat`,
    // `gitlab-deploy-token`, `gitlab-ptt`, `gitlab-rrt`; detect-secrets `GitLabTokenDetector`.
    Rule {
        id: "gitlab-token",
        keywords: &["glpat-", "gldt-", "glptt-", "glrt-"],
        any_case: false,
        name: None,
        pattern: r"gl(?:pat|dt|ptt|rt)-[A-Za-z0-9_-]{20}",
        secret: 0,
        accept: always,
        tail: Some(urlsafe_dot),
        inline_key: false,
        token_start: true,
    },
    // Slack bot, user, app, refresh and configuration tokens (xoxb-, xoxp-, xoxa-, xoxe-,
    // xoxo-, xoxr-, xoxs-: digits, then letters and digits, joined by dashes) and app-level
    // tokens (xapp-). gitleaks `slack-bot-token`, `slack-user-token`, `slack-app-token`,
    // `slack-config-access-token`; detect-secrets `SlackDetector`.
    Rule {
        id: "slack-token",
        keywords: &["xox", "xapp-"],
        any_case: false,
        name: None,
        pattern: r"(?:xox[abeoprs]-[0-9]{1,20}-[A-Za-z0-9-]{6}|xapp-[0-9]-[A-Z0-9]{6})",
        secret: 0,
        accept: always,
        tail: Some(alnum_dash),
        inline_key: false,
        token_start: true,
    },
    // A Slack incoming webhook: its path is the credential. gitleaks `slack-webhook-url`;
    // detect-secrets `SlackDetector`.
    Rule {
        id: "slack-webhook",
        keywords: &["hooks.slack.com"],
        any_case: true,
        name: None,
        pattern: r"(?i:https://hooks\.slack\.com/(?:services|workflows|triggers)/)([A-Za-z0-9+/]{16})",
        secret: 1,
        accept: always,
        tail: Some(base64),
        inline_key: false,
        token_start: false,
    },
    // Stripe secret (sk_) and restricted (rk_) keys, live, test or prod. gitleaks
    // `stripe-access-token`; detect-secrets `StripeDetector`.
    Rule {
        id: "stripe-key",
        keywords: &["k_live_", "k_test_", "k_prod_"],
        any_case: false,
        name: None,
        pattern: r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10}",
        secret: 0,
        accept: always,
        tail: Some(alnum),
        inline_key: false,
        token_start: true,
    },
    // An npm access token: npm_ and 36 letters or digits. gitleaks `npm-access-token`;
    // detect-secrets `NpmDetector` (for the .npmrc `_authToken` line).
    Rule {
        id: "npm-token",
        keywords: &["npm_"],
        any_case: false,
        name: None,
        pattern: r"npm_[A-Za-z0-9]{36}",
        secret: 0,
        accept: npm,
        tail: Some(alnum),
        inline_key: false,
        token_start: true,
    },
    // A PyPI (or TestPyPI) upload token: a macaroon whose base64 starts with the index's
    // name. gitleaks `pypi-upload-token`; detect-secrets `PypiTokenDetector`.
    Rule {
        id: "pypi-token",
        keywords: &["pypi-"],
        any_case: false,
        name: None,
        pattern: r"pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50}",
        secret: 0,
        accept: always,
        tail: Some(urlsafe),
        inline_key: false,
        token_start: true,
    },
    // A Google API key: AIza and 35 URL-safe characters. gitleaks `gcp-api-key`.
    Rule {
        id: "google-api-key",
        keywords: &["AIza"],
        any_case: false,
        name: None,
        pattern: r"(AIza[A-Za-z0-9_-]{35})(?:[^A-Za-z0-9_-]|$)",
        secret: 1,
        accept: always,
        tail: None,
        inline_key: false,
        token_start: true,
    },
    // An Anthropic API or admin key: sk-ant-, a kind and version (api03, admin01), then the
    // key. gitleaks `anthropic-api-key`, `anthropic-admin-api-key`. Before the OpenAI rule:
    // it is the more specific of the two `sk-` shapes.
    Rule {
        id: "anthropic-api-key",
        keywords: &["sk-ant-"],
        any_case: false,
        name: None,
        pattern: r"sk-ant-[a-z]{2,10}[0-9]{2}-[A-Za-z0-9_-]{32}",
        secret: 0,
        accept: always,
        tail: Some(urlsafe),
        inline_key: false,
        token_start: true,
    },
    // An OpenAI API key: sk- (or sk-proj-, sk-svcacct-, sk-admin-) with the base64 of
    // "OpenAI", T3BlbkFJ, inside; project, service-account and admin keys also without it.
    // gitleaks `openai-api-key`; detect-secrets `OpenAIDetector`.
    Rule {
        id: "openai-api-key",
        keywords: &["T3BlbkFJ", "sk-proj-", "sk-svcacct-", "sk-admin-"],
        any_case: false,
        name: None,
        pattern: r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40}|[A-Za-z0-9_-]{16,250}T3BlbkFJ[A-Za-z0-9_-]{16})",
        secret: 0,
        accept: always,
        tail: Some(urlsafe),
        inline_key: false,
        token_start: true,
    },
    // A JSON Web Token: base64url of a JSON header and payload (both start `eyJ`, the
    // encoding of `{"`), joined by dots, then the signature. A header longer than 256
    // characters (one that carries a certificate chain) stays, and the token is replaced from
    // the dot before its payload: the header is public, the payload and signature are not.
    // gitleaks `jwt`; detect-secrets `JwtTokenDetector`.
    Rule {
        id: "jwt",
        keywords: &[".eyJ"],
        any_case: false,
        name: None,
        pattern: r"\beyJ[A-Za-z0-9_-]{4,256}\.eyJ[A-Za-z0-9_-]{4}|\.eyJ[A-Za-z0-9_-]{4}",
        secret: 0,
        accept: always,
        tail: Some(jwt),
        inline_key: false,
        token_start: false,
    },
    // The material of a PEM or OpenSSH private key written on one line (a JSON service
    // account's "-----BEGIN …-----\nMII…"; the line break also escaped twice, as JSON inside
    // JSON writes it, or as `\u000a`, `&#10;`, `%0A` or `<br>`, or the lines as strings of one
    // array or sum, `"…-----", "MII…"`): from the first character after the BEGIN line's
    // marker to `-----END`. A key over several lines is a block, which the
    // redactor follows from line to line with the same marker. gitleaks `private-key`;
    // detect-secrets `PrivateKeyDetector`.
    Rule {
        id: KEY,
        keywords: &["PRIVATE KEY"],
        any_case: false,
        name: None,
        pattern: r#"-----BEGIN[ A-Z0-9]{0,32}PRIVATE KEY(?: BLOCK)?-----(?:\\{1,4}(?:[nr]|u000[aAdD]|x0[aAdD]|01[25])|&#(?:0{0,3}1[03]|[xX]0{0,3}[aAdD]);|&NewLine;|%(?:25)?0[aAdD]|<[bB][rR] ?/?>|["'][ \t]{0,4}[,+.]?[ \t]{0,4}[bB]?["']|[ \t\r]){0,16}([A-Za-z0-9+/])"#,
        secret: 1,
        accept: inline_key,
        tail: None,
        inline_key: true,
        token_start: false,
    },
    // The password of a URL's user information (RFC 3986), `user:password@host` after the
    // scheme; the user and the host stay.
    // gitleaks `generic-api-key` documents the same shape for connection strings, and
    // detect-secrets `BasicAuthDetector` finds it.
    Rule {
        id: "url-password",
        keywords: &["://"],
        any_case: false,
        name: None,
        // A host starts with a letter, a digit, `[` (IPv6), `_`, `%` (percent-encoded), `.`
        // or a byte of a non-ASCII name.
        pattern: r#"([A-Za-z][A-Za-z0-9+.-]{0,30})://([^\s:@/?#"'<>]{0,256}):([^\s/?#"'<>]{1,256})@(?:[A-Za-z0-9\[_%.]|[\x80-\xFF])"#,
        secret: 3,
        accept: url_password,
        tail: None,
        inline_key: false,
        token_start: false,
    },
    // The same, with a password longer than the pattern can hold: 257 characters that cannot
    // be a port, and the password runs on to its last one (the `@` and the host stay).
    Rule {
        id: "url-password",
        keywords: &["://"],
        any_case: false,
        name: None,
        pattern: r#"([A-Za-z][A-Za-z0-9+.-]{0,30})://([^\s:@/?#"'<>]{0,256}):([^\s/?#"'<>@]{257})"#,
        secret: 3,
        accept: always,
        tail: Some(url_password_char),
        inline_key: false,
        token_start: false,
    },
    // The credential of an `Authorization:` (or `Proxy-Authorization:`) header: the scheme
    // word stays (`Authorization: Bearer [REDACTED:authorization]`), as git writes it in a
    // `.git/config` extraheader (`AUTHORIZATION: basic …`) and curl, HTTP files and JSON
    // write it, code that sets a header from two string literals (`.Set("Authorization", "…")`)
    // or assigns a string literal to it (`'Authorization' => '…'` in PHP and Ruby,
    // `headers["Authorization"] = "…"`), and name/value pairs (HAR files, Postman:
    // `{"name": "Authorization", "value": "…"}`); quotes may be escaped (JSON inside a string).
    // Rails' token scheme puts the credential in a parameter: `Token token="…"`.
    // The name is the word alone or the end of a name after `_` or `proxy`
    // (`HTTP_AUTHORIZATION`, `proxyAuthorization`), starting a token as [`starts_token`] takes
    // it (`\r\nAuthorization` in a captured request), not the end of a longer word
    // (`AggregationAuthorization`): [`name_starts`].
    // gitleaks `authorization-header` / `curl-auth-header`; detect-secrets
    // `BasicAuthDetector` and its keyword plugin cover the same values.
    Rule {
        id: "authorization",
        keywords: &["authorization"],
        any_case: true,
        name: None,
        pattern: concat!(
            r#"(?i:authorization)(?:\\?["']?"#,
            gap!(),
            r#"{0,8}:"#,
            gap!(),
            r#"{0,8}\\?["'`]?|\\?["']?\]?[ \t]{0,8}=>?[ \t]{0,8}\\?["']|\\?["'][ \t]{0,8},[ \t]{0,8}\\?["'](?:(?i:value)\\?["'][ \t]{0,8}:[ \t]{0,8}\\?["']|())|(?:[ \t]{0,8}=[ \t]{0,8}|%(?:25)?3[aAdD](?:%(?:25)?20|\+)?)())(?:((?i:bearer|basic|token|bot|digest|negotiate|ntlm|apikey|api-key|sso-key|key|aws))(?:"#,
            gap!(),
            r#"{1,8}|\+|[ \t]{0,2}\\?["'`][ \t]{0,8}\+?[ \t]{0,8}\\?["'`][ \t]{0,2}))?(?:(?i:token)=\\?["']?)?([A-Za-z0-9._~+/=:-]{8,64})"#
        ),
        secret: 4,
        accept: authorization,
        tail: Some(token68),
        inline_key: false,
        token_start: false,
    },
    // An `Authorization` header as a name/value pair over two lines: Kubernetes probes'
    // `httpHeaders` (`- name: Authorization`, then `value: Bearer …`), and pretty-printed HAR
    // files and Postman collections. The value is judged as the first entry judges it.
    Rule {
        id: "authorization",
        keywords: &["authorization"],
        any_case: true,
        name: Some(name_line!(
            r"(?:[A-Za-z0-9]{1,16}[_-]|proxy-?)?authorization"
        )),
        pattern: value_line!(
            r#"(?:((?i:bearer|basic|token|bot|digest|negotiate|ntlm|apikey|api-key|sso-key|key|aws))[ \t]{1,8})?(?:(?i:token)=\\?["']?)?([A-Za-z0-9._~+/=:-]{8,64})"#
        ),
        secret: 2,
        accept: authorization_value,
        tail: Some(token68),
        inline_key: false,
        token_start: false,
    },
    // An HTTP header folded over two lines (RFC 9112's obs-fold, as mail and old servers write
    // it): `Authorization:` and maybe its scheme word on one line, the credential on the next,
    // indented. The scheme may stand on either line.
    Rule {
        id: "authorization",
        keywords: &["authorization"],
        any_case: true,
        name: Some(
            r"(?i)^[ \t]{0,64}(?:[A-Za-z0-9]{1,16}[_-]|proxy-?)?authorization[ \t]{0,8}:[ \t]{0,8}(?:(?:bearer|basic|token|digest|negotiate|ntlm)[ \t]{0,8})?$",
        ),
        pattern: r"^[ \t]{1,64}(?:((?i:bearer|basic|token|digest|negotiate|ntlm))[ \t]{1,8})?([A-Za-z0-9._~+/=:-]{8,64})",
        secret: 2,
        accept: authorization_value,
        tail: Some(token68),
        inline_key: false,
        token_start: false,
    },
];

/// The index of the private-key rule (blocks over several lines count under it).
pub fn private_key() -> usize {
    RULES
        .iter()
        .position(|r| r.id == KEY)
        .expect("the table has the private-key rule")
}
