//! The per-line scan: each rule's next accepted match, found once per line and kept until the
//! scan passes it, the secrets replaced in the order they start, and the state that carries a
//! token's tail or a one-line key's material from one piece of a long line to the next.

use std::sync::OnceLock;

use regex::bytes::Regex;

use super::block::find_end;
use super::pairs::PAIRS;
use super::{
    Groups, MAX_KEY_BLOCK, MAX_MATCH, RULE_COUNT, RULES, Redactor, compile, keywords, marker, rules,
};

/// Bytes a stream in a secret's tail or in inline key material holds back: enough for the
/// line terminator and for a `-----END` that a piece boundary cuts.
const HOLD: usize = 8;

/// Each rule's pattern, compiled on first use ([`regex()`]).
static REGEXES: [OnceLock<Regex>; RULE_COUNT] = [const { OnceLock::new() }; RULE_COUNT];

/// Rule `i`'s pattern, compiled on first use.
pub(super) fn regex(i: usize) -> &'static Regex {
    REGEXES[i].get_or_init(|| compile(RULES[i].pattern))
}

/// Characters a token goes on with: base64 in both alphabets, and `-._~`.
fn token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"+/=-._~".contains(&b)
}

/// Where a scan of one line stands between two pieces.
#[derive(Debug, Default, Clone, Copy)]
enum Inline {
    /// Looking for the next match.
    #[default]
    Plain,
    /// In the tail of an open-ended token, which goes on while its bytes are of this class.
    Tail(fn(u8) -> bool),
    /// In private-key material written on one line, up to `-----END`.
    Key {
        /// Bytes dropped so far.
        material: usize,
        /// The last two bytes dropped (a `\n` escape before `-----END` is shown again).
        last: [u8; 2],
    },
}

/// The scan of one line, whole or in pieces.
#[derive(Debug, Default, Clone)]
pub(super) struct Scan {
    state: Inline,
    /// The rules whose values may start the text ([`Rule::name`](super::Rule::name): the line
    /// before was their name line), for the first [`Scan::run`] only.
    pairs: u32,
    /// Bytes before the position the last [`Scan::run`] returned that the next piece's text
    /// must start with (on top of [`CONTEXT`](super::long_line::CONTEXT)): a match found there
    /// whose secret is not over.
    pub(super) lookback: usize,
    /// Bytes at the start of the text that are there only to be looked back at
    /// ([`LOOK_BEHIND`](super::long_line::LOOK_BEHIND)): no match is looked for in them.
    pub(super) floor: usize,
    /// The rule of the token whose tail is being passed, if the tail is a token's.
    tail_rule: Option<usize>,
    /// Open-ended tokens (one bit per rule) found to hide text after the position the last run
    /// returned, but starting too far back for the next piece to find them again (inside a long
    /// tail), whose own tail class has held on every byte since: when no tail is passed any
    /// more, the one whose tail goes on furthest hides the rest of it, as on a whole line
    /// ([`Scan::take_deferred`]).
    deferred: u32,
}

/// One rule's accepted match: where it starts, its secret, and how far it hides text.
#[derive(Debug, Clone, Copy)]
struct RuleMatch {
    start: usize,
    rule: usize,
    secret: (usize, usize),
    /// Where what the match hides ends, as far as the text goes: its secret, then the tail of an
    /// open-ended token, or a one-line key's material up to `-----END`.
    reach: usize,
}

impl RuleMatch {
    /// The match of `rule` at `start` with `secret`, and how far it reaches in `hay`. `run` is
    /// the last stretch of `hay` found to be of the rule's tail class up to where the class stops
    /// (`(from, end)`): a match whose secret ends inside it reaches its end without walking it
    /// again, so the matches of one long token are looked at in linear time.
    fn new(
        rule: usize,
        hay: &[u8],
        start: usize,
        secret: (usize, usize),
        run: &mut Option<(usize, usize)>,
    ) -> RuleMatch {
        let r = &RULES[rule];
        let reach = if r.inline_key {
            let bound = hay.len().min(secret.0.saturating_add(MAX_KEY_BLOCK));
            find_end(&hay[secret.0..bound]).map_or(bound, |i| secret.0 + i)
        } else if let Some(class) = r.tail {
            match *run {
                Some((from, end)) if (from..=end).contains(&secret.1) => end,
                _ => {
                    let end = secret.1 + hay[secret.1..].iter().take_while(|&&b| class(b)).count();
                    *run = Some((secret.1, end));
                    end
                }
            }
        } else {
            secret.1
        };
        RuleMatch {
            start,
            rule,
            secret,
            reach: reach.max(secret.1),
        }
    }
}

impl Scan {
    /// The scan of a line after one that was the name line of the rules in `pairs` (one bit per
    /// rule; none for most lines).
    pub(super) fn new(pairs: u32) -> Scan {
        Scan {
            pairs,
            ..Scan::default()
        }
    }

    /// Redacts `hay[pos..]` as far as it can be decided, appending what to show to `out`, and
    /// returns the position up to which it is done. `hay[..pos]` is context already shown.
    /// Unless `at_end`, more bytes follow `hay`, and the end is held back: 2 x [`MAX_MATCH`]
    /// bytes while looking for matches, [`HOLD`] in a secret. `mask` names the rules whose keywords
    /// occur in `hay`, when the caller knows them.
    pub(super) fn run(
        &mut self,
        hay: &[u8],
        mut pos: usize,
        at_end: bool,
        mask: Option<u32>,
        out: &mut Vec<u8>,
        red: &mut Redactor,
    ) -> usize {
        let len = hay.len();
        let held = |n: usize| if at_end { len } else { len.saturating_sub(n) };
        // A rule of a pair is looked for only where the line after its name line starts; its
        // keywords are the name line's.
        let pairs = std::mem::take(&mut self.pairs);
        let rules = |mask: u32| mask & !PAIRS | pairs;
        let floor = self.floor;
        let mut next: Option<Next> = mask.map(|m| Next::new(rules(m), floor));
        self.lookback = 0;
        loop {
            match self.state {
                Inline::Tail(class) => {
                    let stop = held(HOLD).max(pos);
                    let from = pos;
                    while pos < stop && class(hay[pos]) {
                        pos += 1;
                    }
                    self.keep_deferred(&hay[from..pos]);
                    if pos == stop && !at_end {
                        // Every match that hides text after `pos` is known, also when this run
                        // began inside the tail and searched nothing yet: one that starts too
                        // far back for the next piece is carried on as deferred.
                        let n = next.get_or_insert_with(|| {
                            Next::new(rules(keywords::rules_of(hay)), floor)
                        });
                        let _ = n.first(hay, pos);
                        self.lookback = in_secret_lookback(Some(n), pos);
                        self.deferred |= n.lost(pos, self.lookback, self.tail_rule);
                        return pos;
                    }
                    // The Plain arm takes a deferred token first.
                    self.tail_rule = None;
                    self.state = Inline::Plain;
                }
                Inline::Key { material, last } => {
                    let room = MAX_KEY_BLOCK - material;
                    let (take, end) = match find_end(&hay[pos..]) {
                        Some(i) => (i, true),
                        None => (held(HOLD).max(pos) - pos, at_end),
                    };
                    if take >= room {
                        // The bound: what follows is shown as text, once the run of token
                        // characters in progress is over (a token that began inside the
                        // material may go on past the bound).
                        pos += room;
                        self.tail_rule = None;
                        self.state = Inline::Tail(token_char);
                        continue;
                    }
                    let mut last = last;
                    for &b in &hay[pos..pos + take] {
                        last = [last[1], b];
                    }
                    pos += take;
                    if !end {
                        self.state = Inline::Key {
                            material: material + take,
                            last,
                        };
                        self.lookback = in_secret_lookback(next.as_ref(), pos);
                        return pos;
                    }
                    if &last == b"\\n" {
                        out.extend_from_slice(b"\\n");
                    }
                    self.state = Inline::Plain;
                }
                Inline::Plain => {
                    // A token found hiding text from `pos` on (where a tail just ended, or where
                    // the last piece stopped) but starting too far back to be found again: it
                    // goes first, as on a whole line. Its secret is over: the marker stands for
                    // the rest of its tail.
                    if let Some(rule) = self.take_deferred(&hay[pos.min(len)..]) {
                        out.extend_from_slice(marker(rule).as_bytes());
                        red.count(rule);
                        self.tail_rule = Some(rule);
                        self.state = Inline::Tail(RULES[rule].tail.expect("deferred: a tail"));
                        continue;
                    }
                    // A match that starts before `whole` lies whole in `hay`, so every secret
                    // that starts before `whole` is known (a match starts before its secret),
                    // and the first of them can go. Text is shown up to `limit`, where every
                    // match that starts before it has its secret before `whole`.
                    let whole = held(MAX_MATCH);
                    let limit = held(2 * MAX_MATCH);
                    if pos >= len {
                        return pos;
                    }
                    // A stream's window without any keyword (most of a long line) needs no
                    // finer look.
                    let n = next
                        .get_or_insert_with(|| Next::new(rules(keywords::rules_of(hay)), floor));
                    match n.first(hay, pos) {
                        Some(f) if f.secret.0 < whole => {
                            out.extend_from_slice(&hay[pos..f.secret.0]);
                            out.extend_from_slice(marker(f.rule).as_bytes());
                            red.count(f.rule);
                            pos = f.secret.1;
                            let rule = &RULES[f.rule];
                            if rule.inline_key {
                                self.state = Inline::Key {
                                    material: f.secret.1 - f.secret.0,
                                    last: [0; 2],
                                };
                            } else if let Some(class) = rule.tail {
                                self.tail_rule = Some(f.rule);
                                self.state = Inline::Tail(class);
                            }
                        }
                        _ => {
                            if pos < limit {
                                out.extend_from_slice(&hay[pos..limit]);
                                pos = limit;
                            }
                            // A match that starts before `pos` and still hides text after it
                            // is found again in the next piece, and so is one that may start
                            // between `whole` and `pos`, cut by the end of `hay`.
                            self.lookback = n.pending(pos).max(pos.saturating_sub(whole));
                            self.deferred |= n.lost(pos, self.lookback, None);
                            return pos;
                        }
                    }
                }
            }
        }
    }
}

impl Scan {
    /// Keeps of the deferred tokens those whose tail class holds on all of `passed`, bytes of
    /// the tail being passed.
    fn keep_deferred(&mut self, passed: &[u8]) {
        let mut d = self.deferred;
        while d != 0 {
            let rule = d.trailing_zeros() as usize;
            d &= d - 1;
            let class = RULES[rule].tail.expect("deferred: a tail");
            if !passed.iter().all(|&b| class(b)) {
                self.deferred &= !(1 << rule);
            }
        }
    }

    /// When the tail being passed ends at the start of `rest`: the deferred token whose tail
    /// goes on furthest into `rest`, if one goes on at all (on a tie, the earlier rule). The
    /// others end no later, so none is deferred any more.
    fn take_deferred(&mut self, rest: &[u8]) -> Option<usize> {
        let mut best: Option<(usize, usize)> = None;
        let mut d = std::mem::take(&mut self.deferred);
        while d != 0 {
            let rule = d.trailing_zeros() as usize;
            d &= d - 1;
            let class = RULES[rule].tail.expect("deferred: a tail");
            let run = rest.iter().take_while(|&&b| class(b)).count();
            if run > 0 && best.is_none_or(|(_, r)| run > r) {
                best = Some((rule, run));
            }
        }
        best.map(|(rule, _)| rule)
    }
}

/// Where one rule's search stands in one text.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// None of its keywords occurs: it cannot match.
    Out,
    /// Not searched from the current position yet.
    Unknown,
    /// Its next accepted match.
    Found(RuleMatch),
    /// It has no further match.
    Done,
}

thread_local! {
    /// The capture slots of each rule, kept from one line to the next.
    static LOCS: std::cell::RefCell<Vec<Option<regex::bytes::CaptureLocations>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The next accepted match of each rule whose keyword occurs in the text, found once and kept
/// until the scan passes its start: a line dense with secrets is searched once per rule, not
/// once per secret.
struct Next {
    slots: [Slot; RULE_COUNT],
    /// The rules whose slots are neither [`Slot::Out`] nor [`Slot::Done`], one bit each.
    live: u32,
    /// Where matches are first looked for ([`Scan::floor`]).
    floor: usize,
    locs: Vec<Option<regex::bytes::CaptureLocations>>,
}

impl Next {
    /// The search of a text whose keywords name the rules in `mask` (one bit per rule), from
    /// `floor` on.
    fn new(mask: u32, floor: usize) -> Next {
        let mut locs = LOCS.take();
        locs.resize_with(RULE_COUNT, || None);
        let mut slots = [Slot::Out; RULE_COUNT];
        for (i, s) in slots.iter_mut().enumerate() {
            if mask & (1 << i) != 0 {
                *s = Slot::Unknown;
            }
        }
        Next {
            slots,
            live: mask,
            locs,
            floor,
        }
    }

    /// The accepted match whose secret comes first among those that hide text after `pos`,
    /// with its secret cut to start at `pos` at the earliest; on a tie, the one that reaches
    /// furthest (with its token's tail or key material), then the one that starts first, then
    /// the earlier rule.
    ///
    /// The order is the secrets', not the matches': what a match shows before its secret (a
    /// URL's user name) may hold another rule's secret (`https://ghp_…:x-oauth-basic@host`).
    /// That secret goes first, and the longer match stays found for its own secret after it.
    /// A match that reaches further than the one taken stays found too, and hides the rest
    /// after it.
    fn first(&mut self, hay: &[u8], pos: usize) -> Option<RuleMatch> {
        let mut best: Option<RuleMatch> = None;
        let mut live = self.live;
        while live != 0 {
            let rule = live.trailing_zeros() as usize;
            live &= live - 1;
            let mut f = match self.slots[rule] {
                Slot::Out | Slot::Done => continue,
                Slot::Found(f) if f.reach > pos => f,
                slot => {
                    // A rule not searched yet looks from the start of `hay` (past the bytes
                    // kept only to look back at): in a piece of a long line, a match may start
                    // in the text already shown and hide text after `pos`. After its match
                    // was passed, it looks on from inside that match: another may start in
                    // it (in its token's tail) and have its secret after `pos`, and then it
                    // starts at most [`MAX_MATCH`] bytes before (a match of the same rule that
                    // starts further back has the same tail, which ends at `pos`). The bound
                    // keeps a run of matches in one tail from being searched again and again.
                    let from = match slot {
                        Slot::Unknown => self.floor.min(pos),
                        Slot::Found(old) => {
                            (old.start + 1).max(pos.saturating_sub(MAX_MATCH)).min(pos)
                        }
                        _ => pos,
                    };
                    let locs =
                        self.locs[rule].get_or_insert_with(|| regex(rule).capture_locations());
                    match find(rule, hay, from, pos, locs) {
                        Some(f) => {
                            self.slots[rule] = Slot::Found(f);
                            f
                        }
                        None => {
                            self.slots[rule] = Slot::Done;
                            self.live &= !(1 << rule);
                            continue;
                        }
                    }
                }
            };
            f.secret.0 = f.secret.0.max(pos);
            f.secret.1 = f.secret.1.max(f.secret.0);
            let key = |f: &RuleMatch| (f.secret.0, std::cmp::Reverse(f.reach), f.start);
            if best.is_none_or(|b| key(&f) < key(&b)) {
                best = Some(f);
            }
        }
        best
    }
}

/// How far back from `pos`, inside a token's tail or a one-line key's material, the next piece
/// must start: where the earliest pending match starts, and at least [`MAX_MATCH`] bytes,
/// since a match whose secret begins after the tail or the material may start that far inside
/// it, and the rules not searched yet (a run that began inside the secret searched none) look
/// for it from the piece's start.
fn in_secret_lookback(next: Option<&Next>, pos: usize) -> usize {
    next.map_or(0, |n| n.pending(pos)).max(MAX_MATCH)
}

impl Next {
    /// How far before `pos` the earliest match found starts that hides text after `pos`, at
    /// most 2 x [`MAX_MATCH`], which bounds what a piece keeps. A match that starts further back
    /// has its secret before `pos` and reaches past it only by a token's tail or key material,
    /// which the scan's state carries on (and after a one-line key's bound, the run of token
    /// characters in progress).
    fn pending(&self, pos: usize) -> usize {
        let starts = self.slots.iter().filter_map(|s| match s {
            Slot::Found(f) if f.reach > pos && f.start < pos => Some(pos - f.start),
            _ => None,
        });
        starts.max().unwrap_or(0).min(2 * MAX_MATCH)
    }
}

impl Next {
    /// The open-ended tokens (one bit per rule, not `current`'s) found to hide text after `pos`
    /// that start more than `lookback` bytes before it: the next piece keeps only `lookback`
    /// bytes, so it cannot find them again.
    fn lost(&self, pos: usize, lookback: usize, current: Option<usize>) -> u32 {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(rule, s)| match s {
                Slot::Found(f)
                    if f.reach > pos
                        && f.start + lookback < pos
                        && Some(rule) != current
                        && RULES[rule].tail.is_some() =>
                {
                    Some(1 << rule)
                }
                _ => None,
            })
            .fold(0, |m, b| m | b)
    }
}

impl Drop for Next {
    fn drop(&mut self) {
        LOCS.set(std::mem::take(&mut self.locs));
    }
}

/// Rule `rule`'s first accepted match in `hay` that starts at or after `from` and hides text
/// after `after`.
fn find(
    rule: usize,
    hay: &[u8],
    mut from: usize,
    after: usize,
    locs: &mut regex::bytes::CaptureLocations,
) -> Option<RuleMatch> {
    let re = regex(rule);
    let r = &RULES[rule];
    let mut run = None;
    while from <= hay.len() {
        // A secret that is the whole match needs no capture engine.
        let (whole, locs) = if r.secret == 0 {
            let m = re.find_at(hay, from)?;
            ((m.start(), m.end()), None)
        } else {
            let m = re.captures_read_at(locs, hay, from)?;
            ((m.start(), m.end()), Some(&*locs))
        };
        if r.token_start && !rules::starts_token(hay, whole.0) {
            from = whole.0 + 1;
            continue;
        }
        let groups = Groups { hay, whole, locs };
        let secret = match r.secret {
            0 => Some(whole),
            i => locs.and_then(|l| l.get(i)),
        };
        if let Some(secret) = secret
            && secret.1 > secret.0
            && (r.accept)(&groups)
        {
            let f = RuleMatch::new(rule, hay, whole.0, secret, &mut run);
            if f.reach > after {
                return Some(f);
            }
        }
        from = whole.0 + 1;
    }
    None
}
