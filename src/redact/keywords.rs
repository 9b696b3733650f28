//! The keyword prefilter: does a text hold any rule's keyword, in any ASCII case, and which
//! rules do those keywords name?
//!
//! Clean text must cost almost nothing, since every byte that cat and grep read passes here.
//! Large texts are lowercased in small blocks on the stack and searched with Teddy (the SIMD
//! multi-literal searcher of the `aho-corasick` crate's `packed` module), in two groups of
//! keywords: one group of thirty keywords gives each of Teddy's buckets so many first bytes
//! that ordinary text keeps matching their fingerprints. Small texts, and machines where Teddy
//! is not available, use a scalar scan: a table of the keywords' first two bytes, then a
//! comparison of the few keywords that start there. The scalar scan needs no set-up, so a call
//! that reads one small file pays only for a table of a few kilobytes.
//!
//! Invariant: [`any`] is false only when no keyword of [`RULES`] occurs in the text, ignoring
//! ASCII case ([`rules_in`] gives exactly the rules whose keywords occur).

use std::sync::OnceLock;

use aho_corasick::packed;

use super::rules::RULES;

/// Texts shorter than this are scanned without Teddy: building its searchers costs more than
/// scanning a few kilobytes.
const SMALL: usize = 4 * 1024;

/// Teddy searches lowercased copies of this many bytes at a time.
const CHUNK: usize = 8 * 1024;

/// The keywords, lowercase, with the index of their rule.
struct Table {
    words: Vec<(&'static [u8], usize)>,
    /// One bit per lowercase byte pair that begins a keyword.
    pairs: Vec<u64>,
    /// For each lowercase first byte, the keywords that begin with it.
    by_first: Vec<Vec<u16>>,
    /// The longest keyword.
    longest: usize,
}

static TABLE: OnceLock<Table> = OnceLock::new();
static TEDDY: OnceLock<Option<Vec<packed::Searcher>>> = OnceLock::new();

fn table() -> &'static Table {
    TABLE.get_or_init(|| {
        let words: Vec<(&'static [u8], usize)> = RULES
            .iter()
            .enumerate()
            .flat_map(|(i, r)| r.keywords.iter().map(move |k| (k.as_bytes(), i)))
            .collect();
        let mut pairs = vec![0u64; 1024];
        let mut by_first = vec![Vec::new(); 256];
        for (n, (w, _)) in words.iter().enumerate() {
            let bit = pair(w[0], w[1]);
            pairs[bit >> 6] |= 1 << (bit & 63);
            by_first[usize::from(w[0])].push(n as u16);
        }
        let longest = words.iter().map(|(w, _)| w.len()).max().unwrap_or(0);
        Table {
            words,
            pairs,
            by_first,
            longest,
        }
    })
}

/// Teddy's searchers, or `None` where the CPU has no support for them.
fn teddy() -> Option<&'static [packed::Searcher]> {
    TEDDY
        .get_or_init(|| {
            let t = table();
            let half = t.words.len().div_ceil(2);
            t.words
                .chunks(half)
                .map(|group| {
                    packed::Config::new()
                        .builder()
                        .extend(group.iter().map(|(w, _)| w))
                        .build()
                })
                .collect()
        })
        .as_deref()
}

fn pair(a: u8, b: u8) -> usize {
    usize::from(a.to_ascii_lowercase()) << 8 | usize::from(b.to_ascii_lowercase())
}

/// Calls `found(rule)` for each keyword occurrence in `hay` until it returns false.
fn scan(hay: &[u8], mut found: impl FnMut(usize) -> bool) {
    let t = table();
    if hay.len() < 3 {
        return;
    }
    for i in 0..hay.len() - 2 {
        let bit = pair(hay[i], hay[i + 1]);
        if t.pairs[bit >> 6] & (1 << (bit & 63)) == 0 {
            continue;
        }
        for &n in &t.by_first[usize::from(hay[i].to_ascii_lowercase())] {
            let (w, rule) = t.words[usize::from(n)];
            if hay.len() - i >= w.len()
                && hay[i..i + w.len()].eq_ignore_ascii_case(w)
                && !found(rule)
            {
                return;
            }
        }
    }
}

/// Whether any keyword occurs in `hay`, in any ASCII case.
pub fn any(hay: &[u8]) -> bool {
    if hay.len() >= SMALL
        && let Some(searchers) = teddy()
    {
        return any_teddy(searchers, hay);
    }
    let mut hit = false;
    scan(hay, |_| {
        hit = true;
        false
    });
    hit
}

fn any_teddy(searchers: &[packed::Searcher], hay: &[u8]) -> bool {
    // Consecutive blocks overlap by one keyword's length less one byte, so that a keyword
    // across a block boundary is whole in one of them.
    let overlap = table().longest - 1;
    let mut buf = [0u8; CHUNK];
    let mut at = 0;
    loop {
        let end = (at + CHUNK).min(hay.len());
        let block = &mut buf[..end - at];
        for (d, s) in block.iter_mut().zip(&hay[at..end]) {
            *d = s.to_ascii_lowercase();
        }
        if searchers.iter().any(|s| s.find(&*block).is_some()) {
            return true;
        }
        if end == hay.len() {
            return false;
        }
        at = end - overlap;
    }
}

/// The rules whose keywords occur in `hay`, one bit per index into [`RULES`].
pub fn rules_in(hay: &[u8]) -> u32 {
    let mut rules = 0u32;
    scan(hay, |r| {
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
    fn each_keyword_is_found_in_any_case_at_any_place() {
        for (i, r) in RULES.iter().enumerate() {
            for k in r.keywords {
                for hay in [
                    k.to_string(),
                    k.to_ascii_uppercase(),
                    format!("{}{}", "q".repeat(5000), k.to_ascii_uppercase()),
                    format!("{k}{}", " ".repeat(9000)),
                    // Across the boundary of two of Teddy's blocks.
                    format!("{}{k}{}", "z".repeat(CHUNK - 2), "z".repeat(CHUNK)),
                ] {
                    assert!(any(hay.as_bytes()), "{k} in {} bytes", hay.len());
                    assert_ne!(rules_in(hay.as_bytes()) & (1 << i), 0, "{k}");
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
            proptest::prop_assert_eq!(any(hay.as_bytes()), expect != 0);
        }
    }
}
