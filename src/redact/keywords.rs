//! The keyword prefilter: does a text hold any rule's keyword, and which rules do those
//! keywords name? A keyword is compared as written, or ignoring ASCII case for a rule whose
//! pattern ignores case ([`Rule::any_case`](super::Rule::any_case)).
//!
//! Clean text must cost almost nothing, since every byte that cat and grep read passes here.
//! Each keyword is looked for through its *fragment*: three of its bytes that ordinary text
//! rarely holds, at a fixed offset in it ([`FRAGMENTS`]); where a fragment occurs, the keywords
//! that have it are compared whole. Large texts are searched for the fragments with Teddy (the
//! SIMD multi-literal searcher of the `aho-corasick` crate's `packed` module), on the text as
//! it is: a keyword of any case has its fragment in each of its cases among Teddy's literals,
//! so no lowercased copy is made. (Aho-Corasick's own automaton over the keywords runs at a few
//! hundred MB/s: too slow for every byte.) Small texts (grep's matching lines, one at a time),
//! and machines where Teddy is not available, use a scalar scan: a bit table of the fragments,
//! case folded and hashed, looked up at each byte. Its tables are built when readbox is
//! compiled, so a call that reads one small file pays for no set-up at all.
//!
//! Invariant: [`any`] is false only when no keyword of [`RULES`] occurs in the text
//! ([`rules_in`] gives exactly the rules whose keywords occur).

use std::sync::OnceLock;

use aho_corasick::packed;

use super::rules::RULES;

#[cfg(test)]
mod order;

/// Texts shorter than this are scanned without Teddy: building its searcher costs more than
/// scanning a few kilobytes.
const SMALL: usize = 4 * 1024;

/// Where each keyword's fragment starts in it, for keywords whose first three bytes are common
/// in ordinary text (`secret` like `section`, `sk-proj-` like `task-`, `authorization` like
/// `author`, `hooks.slack.com` like `hooks.s…` or `.sl…` in code). Keywords not listed are
/// looked for through their first three bytes.
const FRAGMENTS: &[(&str, usize)] = &[
    ("ACCA", 1),
    ("secret", 1),
    ("github_pat_", 5),
    ("hooks.slack.com", 10),
    ("sk-ant-", 1),
    ("sk-proj-", 5),
    ("sk-svcacct-", 4),
    ("sk-admin-", 1),
    ("PRIVATE KEY", 3),
    ("authorization", 5),
];

/// How many keywords the rules have.
const WORD_COUNT: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < RULES.len() {
        n += RULES[i].keywords.len();
        i += 1;
    }
    n
};

/// The longest keyword, in bytes.
pub const LONGEST: usize = {
    let (mut n, mut i) = (0, 0);
    while i < RULES.len() {
        let mut j = 0;
        while j < RULES[i].keywords.len() {
            if RULES[i].keywords[j].len() > n {
                n = RULES[i].keywords[j].len();
            }
            j += 1;
        }
        i += 1;
    }
    n
};

/// One keyword of the table.
#[derive(Clone, Copy)]
struct Word {
    /// The keyword.
    text: &'static [u8],
    /// The index of its rule in [`RULES`].
    rule: usize,
    /// Whether it is compared ignoring ASCII case.
    any_case: bool,
    /// Its fragment's first three bytes, [folded](fold3).
    fragment: u32,
    /// Where its fragment starts in it.
    at: usize,
}

impl Word {
    /// Whether this keyword occurs in `hay` from `start` on.
    fn at_start(&self, hay: &[u8], start: usize) -> bool {
        hay.get(start..start + self.text.len())
            .is_some_and(|t| match self.any_case {
                true => t.eq_ignore_ascii_case(self.text),
                false => t == self.text,
            })
    }
}

/// The keywords, in the table's order. The tables here are built when readbox is compiled: a
/// call pays nothing to set them up.
static WORDS: [Word; WORD_COUNT] = {
    let blank = Word {
        text: b"",
        rule: 0,
        any_case: false,
        fragment: 0,
        at: 0,
    };
    let mut out = [blank; WORD_COUNT];
    let (mut n, mut i) = (0, 0);
    while i < RULES.len() {
        let mut j = 0;
        while j < RULES[i].keywords.len() {
            let text = RULES[i].keywords[j].as_bytes();
            let at = fragment_at(text);
            out[n] = Word {
                text,
                rule: i,
                any_case: RULES[i].any_case,
                fragment: fold3(text[at], text[at + 1], text[at + 2]),
                at,
            };
            n += 1;
            j += 1;
        }
        i += 1;
    }
    out
};

/// Three bytes as one number, each byte with its bit `0x20` set: an ASCII letter and its
/// other case become the same, so one value stands for a fragment in every case (a few other
/// bytes meet too, such as `_` and DEL: that only makes a candidate, which is then compared
/// whole).
const fn fold3(a: u8, b: u8, c: u8) -> u32 {
    (a as u32 | (b as u32) << 8 | (c as u32) << 16) | 0x20_2020
}

/// The bit of a folded trigram in [`TRIGRAMS`] (Fibonacci hashing to 16 bits).
const fn trigram_bit(t: u32) -> usize {
    (t.wrapping_mul(0x9E37_79B1) >> 16) as usize
}

/// Where the fragment of `word` starts ([`FRAGMENTS`], else 0).
const fn fragment_at(word: &[u8]) -> usize {
    let mut i = 0;
    while i < FRAGMENTS.len() {
        let (w, at) = FRAGMENTS[i];
        if eq(w.as_bytes(), word) {
            return at;
        }
        i += 1;
    }
    0
}

const fn eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// One bit per [hashed](trigram_bit) folded fragment: 8 KiB, so that the scalar scan costs a
/// load and a test per byte, and ordinary text rarely gets further.
static TRIGRAMS: [u64; 1024] = {
    let mut out = [0u64; 1024];
    let mut n = 0;
    while n < WORD_COUNT {
        let bit = trigram_bit(WORDS[n].fragment);
        out[bit >> 6] |= 1 << (bit & 63);
        n += 1;
    }
    out
};

/// Calls `found(start, rule)` for each keyword whose fragment starts at `i` in `hay` and that
/// occurs whole there, until it returns false; returns false if it did.
fn keywords_at(hay: &[u8], i: usize, found: &mut impl FnMut(usize, usize) -> bool) -> bool {
    let Some(t) = hay.get(i..i + 3).map(|w| fold3(w[0], w[1], w[2])) else {
        return true;
    };
    for word in &WORDS {
        if word.fragment == t
            && let Some(start) = i.checked_sub(word.at)
            && word.at_start(hay, start)
            && !found(start, word.rule)
        {
            return false;
        }
    }
    true
}

/// Calls `found(start, rule)` for each keyword occurrence in `hay`, in the order their
/// fragments start, until it returns false. That order is as good as the order of their
/// starts for finding the first line with a keyword: a keyword that starts before the one
/// reported first but has its fragment later holds that one's start, so both lie on one line.
fn scan(hay: &[u8], mut found: impl FnMut(usize, usize) -> bool) {
    for (i, w) in hay.windows(3).enumerate() {
        let bit = trigram_bit(fold3(w[0], w[1], w[2]));
        if TRIGRAMS[bit >> 6] & (1 << (bit & 63)) != 0 && !keywords_at(hay, i, &mut found) {
            return;
        }
    }
}

static TEDDY: OnceLock<Option<packed::Searcher>> = OnceLock::new();

/// The literals Teddy looks for: each keyword's fragment (its three bytes), in every ASCII case
/// for a keyword of any case, each once, ordered so that Teddy's buckets let little ordinary
/// text through (see `keywords/order.rs`: on source code the search runs three to four times
/// faster than with the literals in sorted order). The order is computed when the keywords
/// change, not on each call, where it would cost about 0.1 ms; a test checks that this table
/// is current and prints the new one when it is not.
static TEDDY_LITERALS: [&[u8; 3]; 49] = [
    b"pyp", b"ABI", b"AIz", b"RIZ", b"b_p", b"T3B", b"ECR", b"vca", b"ghp", b"gho", b"glp", b"xap",
    b"k-a", b"npm", b".ey", b"oj-", b"ecr", b"AKI", b"://", b"ecR", b"k_p", b"VAT", b"eCr", b"eCR",
    b"ghr", b"gld", b"glr", b"xox", b"K.C", b"k.c", b"k.C", b"K.c", b"Ecr", b"ASI", b"EcR", b"ECr",
    b"k_t", b"riz", b"riZ", b"rIz", b"ghs", b"rIZ", b"Riz", b"RiZ", b"RIz", b"A3T", b"k_l", b"ghu",
    b"CCA",
];

/// Teddy's searcher, or `None` where the CPU has no support for it.
fn teddy() -> Option<&'static packed::Searcher> {
    TEDDY
        .get_or_init(|| {
            packed::Config::new()
                .builder()
                .extend(TEDDY_LITERALS)
                .build()
        })
        .as_ref()
}

/// Whether any keyword occurs in `hay`.
pub fn any(hay: &[u8]) -> bool {
    find(hay).is_some()
}

/// Where in `hay` the first keyword starts, or where one starts that lies on the same line as the
/// first (a keyword holds no `\n`; see [`scan`]): enough to tell which line is the first to
/// hold one.
pub fn find(hay: &[u8]) -> Option<usize> {
    let mut at = None;
    let mut first = |i, _| {
        at = Some(i);
        false
    };
    let teddy = if hay.len() >= SMALL { teddy() } else { None };
    match teddy {
        Some(teddy) => {
            // Teddy finds the fragments, each literal of three bytes, leftmost first; where
            // none of the keywords that have it is whole, the search goes on a byte later.
            let mut from = 0;
            while let Some(m) = teddy.find_in(hay, aho_corasick::Span::from(from..hay.len())) {
                if !keywords_at(hay, m.start(), &mut first) {
                    break;
                }
                from = m.start() + 1;
            }
        }
        _ => scan(hay, first),
    }
    at
}

/// The rules whose keywords occur in `hay`, one bit per index into [`RULES`]: [`rules_in`],
/// after [`any`] where that is the faster way to learn that there are none.
pub fn rules_of(hay: &[u8]) -> u32 {
    if hay.len() >= SMALL && !any(hay) {
        return 0;
    }
    rules_in(hay)
}

/// The rules whose keywords occur in `hay`, one bit per index into [`RULES`].
pub fn rules_in(hay: &[u8]) -> u32 {
    let mut rules = 0u32;
    scan(hay, |_, r| {
        rules |= 1 << r;
        true
    });
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: every keyword searched for on its own, as the rule compares it.
    fn naive(hay: &[u8]) -> u32 {
        let lower = hay.to_ascii_lowercase();
        let mut rules = 0;
        for (i, r) in RULES.iter().enumerate() {
            for k in r.keywords {
                let text = if r.any_case { &lower } else { hay };
                if text.windows(k.len()).any(|w| w == k.as_bytes()) {
                    rules |= 1 << i;
                }
            }
        }
        rules
    }

    #[test]
    fn keywords_are_ascii_of_three_bytes_or_more_and_lowercase_when_of_any_case() {
        for r in &RULES {
            for k in r.keywords {
                assert!(k.len() >= 3 && k.is_ascii(), "{k}");
                assert!(
                    !r.any_case || !k.bytes().any(|b| b.is_ascii_uppercase()),
                    "{k}"
                );
            }
            // A keyword compared as written is sound only where the pattern keeps case.
            assert!(r.any_case || !r.pattern.contains("(?i"), "{}", r.id);
        }
        assert!(RULES.len() <= 32, "rules_in gives one bit per rule");
    }

    #[test]
    fn fragments_lie_inside_their_keywords_and_teddy_takes_them_all() {
        for (w, at) in FRAGMENTS {
            assert!(
                RULES.iter().any(|r| r.keywords.contains(w)) && w.len() - at >= 3,
                "{w}"
            );
        }
        // Teddy takes at most 64 literals; with more, every large text would take the slow
        // scalar scan.
        assert!(TEDDY_LITERALS.len() <= 64);
    }

    #[test]
    fn teddy_table_is_current() {
        let literals = order::teddy_literals();
        let table: Vec<Vec<u8>> = TEDDY_LITERALS.iter().map(|l| l.to_vec()).collect();
        let shown: Vec<String> = literals
            .iter()
            .map(|l| format!("b{:?}", String::from_utf8_lossy(l)))
            .collect();
        assert_eq!(
            table,
            literals,
            "the keywords changed: TEDDY_LITERALS must be [{}]",
            shown.join(", ")
        );
        // Ordering them loses none and repeats none.
        let mut sorted = literals.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), literals.len());
        assert!(sorted.contains(&b"AKI".to_vec()) && sorted.contains(&b"eCr".to_vec()));
    }

    #[test]
    fn each_keyword_is_found_in_its_case_at_any_place() {
        for (i, r) in RULES.iter().enumerate() {
            for k in r.keywords {
                let mut cases = vec![k.to_string()];
                if r.any_case {
                    cases.push(k.to_ascii_uppercase());
                    cases.push(k[..1].to_ascii_uppercase() + &k[1..]);
                }
                for k in cases {
                    for hay in [
                        k.clone(),
                        format!("{}{k}", "q".repeat(5000)),
                        format!("{k}{}", " ".repeat(9000)),
                        format!("{}{k}{}", "z".repeat(SMALL - 2), "z".repeat(SMALL)),
                        format!("{}\n{k}", "zq ".repeat(20_000)),
                    ] {
                        assert!(any(hay.as_bytes()), "{k} in {} bytes", hay.len());
                        assert_ne!(rules_in(hay.as_bytes()) & (1 << i), 0, "{k}");
                        assert_ne!(rules_of(hay.as_bytes()) & (1 << i), 0, "{k}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_keyword_of_fixed_case_in_another_case_is_no_keyword() {
        for hay in [
            "akia",
            "Ghp_",
            "PYPI-",
            "aiza",
            "private key",
            ".EYJ",
            "t3blbkfj",
        ] {
            let long = format!("{hay}{}", " ".repeat(9000));
            assert!(!any(hay.as_bytes()), "{hay}");
            assert!(!any(long.as_bytes()), "{hay}");
            assert_eq!(rules_in(hay.as_bytes()), 0, "{hay}");
        }
    }

    #[test]
    fn clean_text_has_no_keyword() {
        let text = "the quick brown fox jumps over the lazy dog\n".repeat(500);
        assert!(!any(text.as_bytes()));
        assert!(!any(&text.as_bytes()[..40]));
        assert_eq!(rules_in(text.as_bytes()), 0);
        assert!(!any(b""));
        assert!(!any(b"AK"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn both_scans_agree_with_the_naive_search(
            words in proptest::collection::vec(
                proptest::sample::select(vec![
                    "AKIA", "aSiA", "akia", "secret", "SeCrEt", "GHP_", "ghp_", "xox", "sk-ant-",
                    ".eyJ", ".eyj", "://", "pypi", "Authorization", "PRIVATE KEY",
                    "private KEY", "hooks.slack.com", "HOOKS.SLACK.COM", " ", "\n", "qq", "-",
                    "_", "k_live", "a3t", "A3", "T", "npm", "sk-proj", "github_pat", "AIza",
                ]),
                0..3000,
            )
        ) {
            let hay = words.concat();
            let expect = naive(hay.as_bytes());
            proptest::prop_assert_eq!(rules_in(hay.as_bytes()), expect);
            proptest::prop_assert_eq!(rules_of(hay.as_bytes()), expect);
            proptest::prop_assert_eq!(any(hay.as_bytes()), expect != 0);
            // find() lands on the first line that holds a keyword.
            let first_line = hay.split_inclusive('\n').position(|l| naive(l.as_bytes()) != 0);
            let found_line = find(hay.as_bytes()).map(|i| hay[..i].matches('\n').count());
            proptest::prop_assert_eq!(found_line, first_line);
        }
    }
}
