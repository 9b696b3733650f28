//! Secret redaction (docs/contract.md#redaction). Placeholder of the detector's interface: every
//! line passes unchanged.

/// Per-stream redaction state.
#[derive(Debug, Default, Clone)]
pub struct Redactor {
    tally: Tally,
}

/// What to show for one line.
#[derive(Debug)]
pub enum Shown {
    /// The line as it is.
    Same,
    /// The whole line rewritten.
    Replaced(Vec<u8>),
    /// Nothing: a line inside a key block after the first.
    Hidden,
}

/// Redactions by rule.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    total: u64,
}

impl Tally {
    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &Tally) {
        self.total += other.total;
    }
    /// Values replaced in all.
    pub fn total(&self) -> u64 {
        self.total
    }
    /// The note for the envelope, when anything was replaced.
    pub fn note(&self) -> Option<String> {
        None
    }
}

impl Redactor {
    /// A fresh state.
    pub fn new() -> Redactor {
        Redactor::default()
    }
    /// Whether `lines` come out unchanged.
    pub fn passes(&self, _lines: &[u8]) -> bool {
        true
    }
    /// What to show for one line.
    pub fn line(&mut self, _line: &[u8]) -> Shown {
        Shown::Same
    }
    /// The tally so far.
    pub fn tally(&self) -> &Tally {
        &self.tally
    }
    /// Sets the tally (lines read past without showing them are not counted).
    pub fn set_tally(&mut self, tally: Tally) {
        self.tally = tally;
    }
}
