//! The tally of what redaction replaced, per rule, and the note that tells the caller
//! (docs/contract.md#notes).

use super::{RULE_COUNT, RULES, rules};

/// How many values each rule replaced. Mergeable: grep redacts files on several threads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub(super) counts: [u64; RULE_COUNT],
}

impl Tally {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Tally) {
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
    }

    /// The counts added since `earlier`, a tally this one has grown from.
    pub fn since(&self, earlier: &Tally) -> Tally {
        let mut counts = self.counts;
        for (a, b) in counts.iter_mut().zip(earlier.counts) {
            *a -= b;
        }
        Tally { counts }
    }

    /// Whether these counts hold a private-key block.
    pub fn has_key_block(&self) -> bool {
        self.counts[rules::private_key()] > 0
    }

    /// The number of replaced values (a private-key block counts once).
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The rules that replaced values and how many each, in table order; the entries of one
    /// rule id (a family found in two forms) count together.
    pub fn by_rule(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        RULES
            .iter()
            .enumerate()
            .filter(|&(i, r)| RULES[..i].iter().all(|e| e.id != r.id))
            .map(|(_, r)| {
                let n = RULES.iter().zip(self.counts);
                (r.id, n.filter(|(e, _)| e.id == r.id).map(|(_, n)| n).sum())
            })
            .filter(|&(_, n)| n > 0)
    }

    /// The note that tells the caller what was redacted (docs/contract.md#notes), or `None`
    /// when nothing was: how many values and which rules, never anything of the values.
    /// E.g. `redacted 3 secret values (github-token 2, jwt 1); each reads [REDACTED:RULE]`.
    pub fn note(&self) -> Option<String> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let rules: Vec<String> = self.by_rule().map(|(id, n)| format!("{id} {n}")).collect();
        let values = if total == 1 { "value" } else { "values" };
        Some(format!(
            "redacted {total} secret {values} ({}); each reads [REDACTED:RULE]",
            rules.join(", ")
        ))
    }
}
