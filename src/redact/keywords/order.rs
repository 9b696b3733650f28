//! The order of Teddy's literals (`TEDDY_LITERALS` in the parent module), computed here when
//! the keywords change; a test checks that the table is current.

use super::WORDS;

/// The literals Teddy looks for: each keyword's fragment (its three bytes), in every ASCII case
/// for a keyword of any case, each once, in the order that [`teddy_order`] gives.
pub fn teddy_literals() -> Vec<Vec<u8>> {
    let mut literals = std::collections::BTreeSet::new();
    for word in &WORDS {
        let fragment = &word.text[word.at..word.at + 3];
        if !word.any_case {
            literals.insert(fragment.to_vec());
            continue;
        }
        for case in 0..8u8 {
            let variant: Vec<u8> = (0..3)
                .map(|k| match case >> k & 1 {
                    1 => fragment[k].to_ascii_uppercase(),
                    _ => fragment[k],
                })
                .collect();
            literals.insert(variant);
        }
    }
    teddy_order(literals.into_iter().collect())
}

/// How often a byte occurs in ordinary text (source code, prose, logs), roughly: the weights
/// that [`teddy_order`] estimates a bucket's false candidates with.
fn commonness(b: u8) -> f64 {
    match b {
        b' ' => 0.15,
        b'a'..=b'z' => 0.03,
        b'\n' | b'.' | b'_' | b'-' | b':' | b'/' | b',' | b';' | b'(' | b')' | b'"' | b'=' => 0.01,
        b'A'..=b'Z' | b'0'..=b'9' => 0.005,
        _ => 0.001,
    }
}

/// What one Teddy bucket tests at each of the three places: the low and the high four bits
/// of its literals' bytes there, one bit per value.
#[derive(Clone, Copy, Default)]
struct Nibbles([(u16, u16); 3]);

impl Nibbles {
    fn of(literals: &[&[u8]]) -> Nibbles {
        let mut n = Nibbles::default();
        for l in literals {
            for (k, (lo, hi)) in n.0.iter_mut().enumerate() {
                *lo |= 1 << (l[k] & 15);
                *hi |= 1 << (l[k] >> 4);
            }
        }
        n
    }

    fn with(self, other: Nibbles) -> Nibbles {
        let mut n = self;
        for (a, b) in n.0.iter_mut().zip(other.0) {
            a.0 |= b.0;
            a.1 |= b.1;
        }
        n
    }

    /// How much ordinary text the bucket lets through as candidates. It tests each byte's
    /// two halves apart, so at each place it admits every byte whose low half is one of its
    /// literals' there and whose high half is one of theirs: `ghp` with `gho` admits little
    /// more than the two, `ghp` with `xox` admits `gop`, `xhx` and more.
    fn cost(self) -> f64 {
        self.0
            .iter()
            .map(|&(lo, hi)| {
                let mut sum = 0.0;
                let mut lows = lo;
                while lows != 0 {
                    let l = lows.trailing_zeros() as u8;
                    lows &= lows - 1;
                    let mut highs = hi;
                    while highs != 0 {
                        let h = highs.trailing_zeros() as u8;
                        highs &= highs - 1;
                        sum += commonness(h << 4 | l);
                    }
                }
                sum
            })
            .product()
    }
}

/// Orders Teddy's literals so that its buckets hold literals that let little ordinary text
/// through together: on source code this makes the search three to four times faster than the
/// literals in sorted order. Teddy (in `aho-corasick` 1.x) puts literals whose bytes agree in
/// their low four bits (a fragment's cases) in one bucket and gives each other literal the
/// bucket its index names, counting down from the last of 16 buckets (8 for 32 literals or
/// fewer); literals are grouped here, cheapest merge first, until there are as many groups as
/// buckets, and given out one group after another so that each group's literals fall in one
/// bucket. Only speed depends on this: Teddy finds every literal whatever its bucket.
fn teddy_order(literals: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let buckets = if literals.len() > 32 { 16 } else { 8 };
    let nibbles = |l: &[u8]| l.iter().map(|b| b & 15).collect::<Vec<u8>>();
    // Literals that Teddy puts together anyway, by their low four bits: one key each.
    let mut keys: std::collections::BTreeMap<Vec<u8>, Vec<&[u8]>> =
        std::collections::BTreeMap::new();
    for l in &literals {
        keys.entry(nibbles(l)).or_default().push(l);
    }
    let mut groups: Vec<(Vec<Vec<&[u8]>>, Nibbles)> = keys
        .into_values()
        .map(|k| {
            let n = Nibbles::of(&k);
            (vec![k], n)
        })
        .collect();
    // What merging two groups adds (their costs are known), for every pair i < j, updated for
    // the merged group's pairs only.
    let mut costs: Vec<f64> = groups.iter().map(|g| g.1.cost()).collect();
    let delta = |a: Nibbles, b: Nibbles, ca: f64, cb: f64| a.with(b).cost() - ca - cb;
    let mut deltas: Vec<Vec<f64>> = (0..groups.len())
        .map(|i| {
            (0..groups.len())
                .map(|j| match j > i {
                    true => delta(groups[i].1, groups[j].1, costs[i], costs[j]),
                    false => f64::MAX,
                })
                .collect()
        })
        .collect();
    while groups.len() > buckets {
        let mut best = (f64::MAX, 0, 1);
        for (i, row) in deltas.iter().enumerate() {
            for (j, &d) in row.iter().enumerate().skip(i + 1) {
                if d < best.0 {
                    best = (d, i, j);
                }
            }
        }
        let (_, i, j) = best;
        let (keys, n) = groups.remove(j);
        groups[i].0.extend(keys);
        groups[i].1 = groups[i].1.with(n);
        costs.remove(j);
        costs[i] = groups[i].1.cost();
        deltas.remove(j);
        for row in &mut deltas {
            row.remove(j);
        }
        for k in 0..groups.len() {
            let (lo, hi) = (i.min(k), i.max(k));
            if lo != hi {
                deltas[lo][hi] = delta(groups[lo].1, groups[hi].1, costs[lo], costs[hi]);
            }
        }
    }
    let groups: Vec<Vec<Vec<&[u8]>>> = groups.into_iter().map(|(g, _)| g).collect();
    // Round r gives each group's r-th key (its first literal) at the index that names the
    // group's bucket; where a group has no r-th key, the index goes to another case of a key
    // already given out, which joins that key's bucket whatever its index.
    let mut fillers: Vec<&[u8]> = Vec::new();
    let mut out: Vec<Vec<u8>> = Vec::with_capacity(literals.len());
    let rounds = groups.iter().map(Vec::len).max().unwrap_or(0);
    for r in 0..rounds {
        for g in &groups {
            match g.get(r) {
                Some(key) => {
                    out.push(key[0].to_vec());
                    fillers.extend(&key[1..]);
                }
                None => out.extend(fillers.pop().map(<[u8]>::to_vec)),
            }
        }
    }
    out.extend(fillers.into_iter().map(<[u8]>::to_vec));
    out
}
