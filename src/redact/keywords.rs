//! The keyword prefilter: does a text hold any rule's keyword, in any ASCII case, and which
//! rules do those keywords name?
//!
//! Clean text must cost almost nothing, since every byte that cat and grep read passes here.
//! Large texts are lowercased in small blocks on the stack and searched with Teddy (the SIMD
//! multi-literal searcher of the `aho-corasick` crate's `packed` module) for a rare fragment of
//! each keyword, then compared whole where a fragment is found. (Aho-Corasick's own automaton
//! over the keywords, ignoring case, runs at a few hundred MB/s: too slow for every byte.)
//! Small texts (grep's matching lines, one at a time), and machines where Teddy is not
//! available, use a scalar scan: a bit table of the first three bytes of the same fragments,
//! case folded and hashed, looked up at each byte, then a comparison of the keywords whose
//! fragment starts there. Its tables are built when readbox is compiled, so a call that reads
//! one small file pays for no set-up at all.
//!
//! Invariant: [`any`] is false only when no keyword of [`RULES`] occurs in the text, ignoring
//! ASCII case ([`rules_in`] gives exactly the rules whose keywords occur).

use std::sync::OnceLock;

use aho_corasick::packed;

use super::rules::RULES;

/// Texts shorter than this are scanned without Teddy: building its searchers costs more than
/// scanning a few kilobytes.
const SMALL: usize = 4 * 1024;

/// Teddy searches lowercased copies of up to this many bytes at a time.
const CHUNK: usize = 8 * 1024;

/// The first block Teddy searches; each next one is twice as long, up to [`CHUNK`].
const FIRST_BLOCK: usize = 256;

thread_local! {
    /// The lowercased block, kept from one search to the next.
    static BLOCK: std::cell::RefCell<Box<[u8; CHUNK]>> =
        std::cell::RefCell::new(Box::new([0; CHUNK]));
}

/// Where Teddy looks for a keyword: the part of it that ordinary text rarely holds, given as
/// the offset it starts at. Teddy tells candidates apart by their first three bytes, so a
/// keyword that begins like common words (`acca` like `access`, `private key` like `println`,
/// `authorization` like `author`) is searched from a later, rarer point and then compared
/// whole. Keywords not listed are searched from their start.
const FRAGMENTS: &[(&str, usize)] = &[
    ("acca", 1),
    ("secret", 1),
    ("github_pat_", 5),
    ("hooks.slack.com", 5),
    ("sk-ant-", 1),
    ("sk-proj-", 4),
    ("sk-svcacct-", 3),
    ("sk-admin-", 1),
    ("private key", 3),
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

// A keyword is one bit in a u64 below.
const _: () = assert!(WORD_COUNT <= 64);

/// The keywords (lowercase) with the index of their rule, in the table's order. The tables
/// here are built when readbox is compiled: a call pays nothing to set them up.
static WORDS: [(&[u8], usize); WORD_COUNT] = {
    let mut out: [(&[u8], usize); WORD_COUNT] = [(b"", 0); WORD_COUNT];
    let (mut n, mut i) = (0, 0);
    while i < RULES.len() {
        let mut j = 0;
        while j < RULES[i].keywords.len() {
            out[n] = (RULES[i].keywords[j].as_bytes(), i);
            n += 1;
            j += 1;
        }
        i += 1;
    }
    out
};

/// Three bytes as one number, each byte with its bit `0x20` set: an ASCII letter and its
/// other case become the same, as keyword and text must (a few other bytes meet too, such as
/// `_` and DEL: that only makes a candidate, which is then compared whole).
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

/// For each keyword (an index into [`WORDS`]): its fragment's first three bytes, folded, and
/// the fragment's offset in the keyword.
static FRAGS: [(u32, usize); WORD_COUNT] = {
    let mut out = [(0, 0); WORD_COUNT];
    let mut n = 0;
    while n < WORD_COUNT {
        let w = WORDS[n].0;
        let at = fragment_at(w);
        out[n] = (fold3(w[at], w[at + 1], w[at + 2]), at);
        n += 1;
    }
    out
};

/// One bit per [hashed](trigram_bit) folded trigram that begins a keyword's fragment: 8 KiB,
/// so that the scalar scan costs a load and a test per byte, and ordinary text rarely gets
/// further.
static TRIGRAMS: [u64; 1024] = {
    let mut out = [0u64; 1024];
    let mut n = 0;
    while n < WORD_COUNT {
        let bit = trigram_bit(FRAGS[n].0);
        out[bit >> 6] |= 1 << (bit & 63);
        n += 1;
    }
    out
};

/// The longest keyword.
const LONGEST: usize = {
    let (mut max, mut n) = (0, 0);
    while n < WORD_COUNT {
        if WORDS[n].0.len() > max {
            max = WORDS[n].0.len();
        }
        n += 1;
    }
    max
};

static TEDDY: OnceLock<Option<Teddy>> = OnceLock::new();

/// The Teddy searcher and, for each of its patterns, the keyword (an index into the table's
/// words) and the offset of the fragment in it.
struct Teddy {
    searcher: packed::Searcher,
    keywords: Vec<(usize, usize)>,
}

/// Teddy's searcher, or `None` where the CPU has no support for it.
fn teddy() -> Option<&'static Teddy> {
    TEDDY
        .get_or_init(|| {
            let keywords: Vec<(usize, usize)> = (0..WORD_COUNT).map(|n| (n, FRAGS[n].1)).collect();
            let searcher = packed::Config::new()
                .builder()
                .extend(keywords.iter().map(|&(n, at)| &WORDS[n].0[at..]))
                .build()?;
            Some(Teddy { searcher, keywords })
        })
        .as_ref()
}

/// Calls `found(start, rule)` for each keyword occurrence in `hay`, in the order their
/// fragments start (see [`Teddy::find`] for why that is as good as the order of their starts),
/// until it returns false.
fn scan(hay: &[u8], mut found: impl FnMut(usize, usize) -> bool) {
    for (i, w) in hay.windows(3).enumerate() {
        let t = fold3(w[0], w[1], w[2]);
        let bit = trigram_bit(t);
        if TRIGRAMS[bit >> 6] & (1 << (bit & 63)) == 0 {
            continue;
        }
        for (n, &(frag, at)) in FRAGS.iter().enumerate() {
            let (word, rule) = WORDS[n];
            if frag == t
                && let Some(start) = i.checked_sub(at)
                && hay
                    .get(start..start + word.len())
                    .is_some_and(|s| s.eq_ignore_ascii_case(word))
                && !found(start, rule)
            {
                return;
            }
        }
    }
}

/// Whether any keyword occurs in `hay`, in any ASCII case.
pub fn any(hay: &[u8]) -> bool {
    find(hay).is_some()
}

/// Where in `hay` the first keyword starts, or where one starts that lies on the same line as
/// the first (a keyword holds no `\n`): enough to tell which line is the first to hold one.
pub fn find(hay: &[u8]) -> Option<usize> {
    if hay.len() >= SMALL
        && let Some(teddy) = teddy()
    {
        return teddy.find(hay);
    }
    let mut at = None;
    scan(hay, |i, _| {
        at = Some(i);
        false
    });
    at
}

impl Teddy {
    /// See [`find`]. Teddy reports fragments in the order they start, and a keyword found
    /// through a later fragment than another's starts inside that other keyword when it
    /// starts before it: so it is on the same line.
    fn find(&self, hay: &[u8]) -> Option<usize> {
        // Consecutive blocks overlap by one keyword's length less one byte, so that a keyword
        // across a block boundary is whole in one of them. The blocks grow from a few hundred
        // bytes: a reader that asks again after each line with a keyword (see
        // `Redactor::clean_prefix`) should not lowercase a whole block for every line.
        let overlap = LONGEST - 1;
        BLOCK.with_borrow_mut(|buf| {
            let mut at = 0;
            let mut size = FIRST_BLOCK;
            loop {
                let end = (at + size).min(hay.len());
                let block = &mut buf[..end - at];
                for (d, s) in block.iter_mut().zip(&hay[at..end]) {
                    *d = s.to_ascii_lowercase();
                }
                if let Some(i) = self.first_in(block) {
                    return Some(at + i);
                }
                if end == hay.len() {
                    return None;
                }
                at = end - overlap;
                size = (size * 2).min(CHUNK);
            }
        })
    }

    /// Where the keyword of the first fragment in `block` (lowercase) that lies in its whole
    /// keyword starts. A fragment found where its keyword is not whole is passed over; the
    /// search goes on one byte later, so that no occurrence is skipped (no fragment is a
    /// prefix of another: two never start at one place).
    fn first_in(&self, block: &[u8]) -> Option<usize> {
        let mut at = 0;
        while let Some(m) = self
            .searcher
            .find_in(block, aho_corasick::Span::from(at..block.len()))
        {
            let (n, offset) = self.keywords[m.pattern().as_usize()];
            let word = WORDS[n].0;
            if let Some(start) = m.start().checked_sub(offset)
                && block.get(start..start + word.len()) == Some(word)
            {
                return Some(start);
            }
            at = m.start() + 1;
        }
        None
    }
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

    /// The reference: every keyword searched for on its own.
    fn naive(hay: &[u8]) -> u32 {
        let lower = hay.to_ascii_lowercase();
        let mut rules = 0;
        for (i, r) in RULES.iter().enumerate() {
            for k in r.keywords {
                if lower.windows(k.len()).any(|w| w == k.as_bytes()) {
                    rules |= 1 << i;
                }
            }
        }
        rules
    }

    #[test]
    fn keywords_are_lowercase_ascii_of_three_bytes_or_more() {
        for r in &RULES {
            for k in r.keywords {
                assert!(k.len() >= 3, "{k}");
                assert!(
                    k.bytes().all(|b| b.is_ascii() && !b.is_ascii_uppercase()),
                    "{k}"
                );
            }
        }
        assert!(RULES.len() <= 32, "rules_in gives one bit per rule");
    }

    #[test]
    fn fragments_are_inside_their_keywords_and_no_fragment_begins_another() {
        for (w, at) in FRAGMENTS {
            assert!(
                RULES.iter().any(|r| r.keywords.contains(w)) && w.len() - at >= 3,
                "{w}"
            );
        }
        let frags: Vec<&[u8]> = WORDS.iter().map(|(w, _)| &w[fragment_at(w)..]).collect();
        for (i, a) in frags.iter().enumerate() {
            for (j, b) in frags.iter().enumerate() {
                assert!(i == j || !b.starts_with(a), "{:?} {:?}", a, b);
            }
        }
    }

    #[test]
    fn each_keyword_is_found_in_any_case_at_any_place() {
        for (i, r) in RULES.iter().enumerate() {
            for k in r.keywords {
                for hay in [
                    k.to_string(),
                    k.to_ascii_uppercase(),
                    format!("{}{}", "q".repeat(5000), k.to_ascii_uppercase()),
                    format!("{k}{}", " ".repeat(9000)),
                    // Across the boundaries of Teddy's blocks.
                    format!("{}{k}{}", "z".repeat(CHUNK - 2), "z".repeat(CHUNK)),
                    format!("{}{k}{}", "z".repeat(FIRST_BLOCK - 2), "z".repeat(CHUNK)),
                    format!(
                        "{}{k}{}",
                        "z".repeat(3 * FIRST_BLOCK - 18),
                        "z".repeat(CHUNK)
                    ),
                ] {
                    assert!(any(hay.as_bytes()), "{k} in {} bytes", hay.len());
                    assert_ne!(rules_in(hay.as_bytes()) & (1 << i), 0, "{k}");
                    assert_ne!(rules_of(hay.as_bytes()) & (1 << i), 0, "{k}");
                }
            }
        }
    }

    #[test]
    fn clean_text_has_no_keyword() {
        let text = "the quick brown fox jumps over the lazy dog\n".repeat(500);
        assert!(!any(text.as_bytes()));
        assert!(!any(&text.as_bytes()[..40]));
        assert_eq!(rules_in(text.as_bytes()), 0);
        assert!(!any(b""));
        assert!(!any(b"ak"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn both_scans_agree_with_the_naive_search(
            words in proptest::collection::vec(
                proptest::sample::select(vec![
                    "AKIA", "aSiA", "secret", "GHP_", "xox", "sk-ant-", ".eyJ", "://", "pypi",
                    "Authorization", "private KEY", "hooks.slack.com", " ", "\n", "qq", "-",
                    "_", "k_live", "a3", "t", "npm", "sk-proj", "github_pat",
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
