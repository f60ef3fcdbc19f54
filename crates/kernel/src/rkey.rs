//! Record keys of deployment records (SPEC §2, seed 002 "Rkeys").
//!
//! A deployment's record key is its object name; when that key is taken by a record that has
//! ended, is past its TTL, or is the reserved `self`, the object moves along its succession:
//!
//! | n | rkey |
//! |---|---|
//! | 0 | `<name>` |
//! | 1 | `<name>-<first 8 hex of uid>` |
//! | 2..=64 | `<name>-<first 8 hex of uid>-<n>` |
//!
//! Invariants: the succession of a name and uid is fixed (the same keys in the same order on
//! every device), holds [`MAX_SUCCESSORS`]` + 1` distinct keys, and every key in it is a valid
//! atproto record key of at most 75 characters (a label is at most 63). A stored URI stays
//! bound while its rkey is in the succession of the same name and uid. Running past n = 64 is
//! [`RkeyError::Exhausted`], never a panic. `self` is never a deployment's key.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::newtype::text_newtype;

use crate::name::Name;
use crate::object::Uid;
use crate::timestamp::Timestamp;

/// The last successor index: n runs from 0 to 64.
pub const MAX_SUCCESSORS: u32 = 64;
/// The rkey of the index; never a deployment's.
pub const RESERVED: &str = "self";
/// The longest atproto record key.
pub const MAX_RKEY_LEN: usize = 512;

/// A valid atproto record key: 1 to 512 of `A-Z a-z 0-9 . - _ : ~`, and neither `.` nor `..`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Rkey(String);

text_newtype!(Rkey, RkeyError);

/// Why a text or a successor is not a usable record key.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RkeyError {
    /// The text breaks the atproto record-key syntax.
    #[error("{text:?} is not a record key: use 1 to 512 of A-Z a-z 0-9 . - _ : ~, not . or ..")]
    Syntax {
        /// The text that was given.
        text: String,
    },
    /// Every successor of the name is taken.
    #[error("every rkey of {name} (n = 0 to {max}) is taken by an ended or expired record")]
    Exhausted {
        /// The object name.
        name: Name,
        /// [`MAX_SUCCESSORS`].
        max: u32,
    },
}

impl Rkey {
    /// The record key, when `text` is one.
    pub fn parse(text: &str) -> Result<Self, RkeyError> {
        if is_record_key(text) {
            Ok(Self(text.to_owned()))
        } else {
            Err(RkeyError::Syntax {
                text: text.to_owned(),
            })
        }
    }

    /// Whether this is `self`, the index's key.
    pub fn is_reserved(&self) -> bool {
        self.0 == RESERVED
    }
}

/// The lexicon crate's record-key syntax (the atproto one), in one place.
fn is_record_key(text: &str) -> bool {
    swdesk_lexicon::syntax::record_key(text).is_ok()
}

impl From<&Name> for Rkey {
    /// A DNS-1123 label is always a valid record key.
    fn from(name: &Name) -> Self {
        Self(name.as_str().to_owned())
    }
}

/// The record keys one object may use, in order: fixed by its name and uid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Succession {
    name: Name,
    short_uid: String,
}

impl Succession {
    /// The succession of the object `name` with `uid`.
    pub fn new(name: &Name, uid: &Uid) -> Self {
        Self {
            name: name.clone(),
            short_uid: uid.short().to_owned(),
        }
    }

    /// The n-th key, n in 0..=[`MAX_SUCCESSORS`].
    pub fn nth(&self, n: u32) -> Result<Rkey, RkeyError> {
        let text = match n {
            0 => self.name.as_str().to_owned(),
            1 => format!("{}-{}", self.name, self.short_uid),
            2..=MAX_SUCCESSORS => format!("{}-{}-{n}", self.name, self.short_uid),
            _ => return Err(self.exhausted()),
        };
        Rkey::parse(&text)
    }

    /// Where `rkey` stands in this succession, if it is in it.
    pub fn position(&self, rkey: &Rkey) -> Option<u32> {
        (0..=MAX_SUCCESSORS).find(|n| self.nth(*n).is_ok_and(|key| &key == rkey))
    }

    /// Whether a stored record URI with this `rkey` stays bound to the object (never `self`).
    pub fn keeps_bound(&self, rkey: &Rkey) -> bool {
        !rkey.is_reserved() && self.position(rkey).is_some()
    }

    /// Every key, n = 0 first.
    pub fn keys(&self) -> impl Iterator<Item = Rkey> + '_ {
        (0..=MAX_SUCCESSORS).filter_map(|n| self.nth(n).ok())
    }

    fn exhausted(&self) -> RkeyError {
        RkeyError::Exhausted {
            name: self.name.clone(),
            max: MAX_SUCCESSORS,
        }
    }
}

/// What a fresh bind found at a candidate rkey.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occupant {
    /// No record there.
    Free,
    /// A record; `expires_at` is set for an EphemeralInfra record.
    Record {
        /// Whether the record's status says it ended.
        ended: bool,
        /// When the record expires, if it has a lifetime.
        expires_at: Option<Timestamp>,
    },
}

/// The outcome of probing one candidate rkey during a fresh bind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// Bind to this key: it is free, or holds a live record of this deployment.
    Bind(Rkey),
    /// The key is unusable: probe this next one.
    Next(Rkey),
}

/// Whether a fresh bind must move past `rkey`: it is `self`, or its record has ended or is
/// past its TTL at `now` (an expired record is never live again).
pub fn must_move_past(rkey: &Rkey, occupant: Occupant, now: Timestamp) -> bool {
    match occupant {
        _ if rkey.is_reserved() => true,
        Occupant::Free => false,
        Occupant::Record { ended, expires_at } => ended || expires_at.is_some_and(|at| at <= now),
    }
}

/// One step of a fresh bind: probing the n-th key of `succession`, occupied by `occupant`.
pub fn probe(
    succession: &Succession,
    n: u32,
    occupant: Occupant,
    now: Timestamp,
) -> Result<Probe, RkeyError> {
    let rkey = succession.nth(n)?;
    if must_move_past(&rkey, occupant, now) {
        succession.nth(n.saturating_add(1)).map(Probe::Next)
    } else {
        Ok(Probe::Bind(rkey))
    }
}

/// Where a reconcile starts looking for its record key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// `spec.record.uri` is set: follow its rkey, whatever it is.
    Follow(Rkey),
    /// The stored record is still bound: keep its rkey.
    Keep(Rkey),
    /// A fresh bind: probe the succession from n = 0.
    Fresh,
}

/// The first rkey rule: a declared URI wins, then a stored one still in the succession.
pub fn start(succession: &Succession, declared: Option<&Rkey>, stored: Option<&Rkey>) -> Start {
    match (declared, stored) {
        (Some(rkey), _) => Start::Follow(rkey.clone()),
        (None, Some(rkey)) if succession.keeps_bound(rkey) => Start::Keep(rkey.clone()),
        _ => Start::Fresh,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn succession(name: &str) -> Succession {
        let uid = Uid::parse("0f8e3c1a-5b2d-4c7e-9a10-2b3c4d5e6f70").unwrap();
        Succession::new(&Name::parse(name).unwrap(), &uid)
    }

    fn rkey(text: &str) -> Rkey {
        Rkey::parse(text).unwrap()
    }

    fn now() -> Timestamp {
        Timestamp::parse_rfc3339("2026-12-02T12:00:00Z").unwrap()
    }

    fn live() -> Occupant {
        Occupant::Record {
            ended: false,
            expires_at: None,
        }
    }

    #[test]
    fn the_succession_follows_the_spec_table() {
        let s = succession("web");
        assert_eq!(s.nth(0).unwrap(), rkey("web"));
        assert_eq!(s.nth(1).unwrap(), rkey("web-0f8e3c1a"));
        assert_eq!(s.nth(2).unwrap(), rkey("web-0f8e3c1a-2"));
        assert_eq!(s.nth(64).unwrap(), rkey("web-0f8e3c1a-64"));
    }

    #[test]
    fn asking_past_the_last_successor_is_a_typed_error() {
        let error = succession("web").nth(65).unwrap_err();
        assert_eq!(
            error,
            RkeyError::Exhausted {
                name: Name::parse("web").unwrap(),
                max: 64
            }
        );
    }

    #[test]
    fn a_stored_rkey_of_another_uid_is_not_bound() {
        assert!(!succession("web").keeps_bound(&rkey("web-deadbeef")));
        assert!(succession("web").keeps_bound(&rkey("web-0f8e3c1a-7")));
    }

    #[test]
    fn self_is_skipped_even_when_free() {
        let probed = probe(&succession("self"), 0, Occupant::Free, now()).unwrap();
        assert_eq!(probed, Probe::Next(rkey("self-0f8e3c1a")));
    }

    #[test]
    fn an_ended_record_moves_the_bind_to_the_next_successor() {
        let ended = Occupant::Record {
            ended: true,
            expires_at: None,
        };
        assert_eq!(
            probe(&succession("web"), 1, ended, now()).unwrap(),
            Probe::Next(rkey("web-0f8e3c1a-2"))
        );
    }

    #[test]
    fn a_record_past_its_ttl_moves_the_bind_on_and_one_within_it_binds() {
        let expired = Occupant::Record {
            ended: false,
            expires_at: Some(now()),
        };
        let later = Occupant::Record {
            ended: false,
            expires_at: Some(now().saturating_add(std::time::Duration::from_millis(1))),
        };
        assert_eq!(
            probe(&succession("web"), 0, expired, now()).unwrap(),
            Probe::Next(rkey("web-0f8e3c1a"))
        );
        assert_eq!(
            probe(&succession("web"), 0, later, now()).unwrap(),
            Probe::Bind(rkey("web"))
        );
    }

    #[test]
    fn a_free_or_live_key_binds() {
        assert_eq!(
            probe(&succession("web"), 3, Occupant::Free, now()).unwrap(),
            Probe::Bind(rkey("web-0f8e3c1a-3"))
        );
        assert_eq!(
            probe(&succession("web"), 0, live(), now()).unwrap(),
            Probe::Bind(rkey("web"))
        );
    }

    #[test]
    fn an_ended_last_successor_exhausts_the_succession() {
        let ended = Occupant::Record {
            ended: true,
            expires_at: None,
        };
        assert!(matches!(
            probe(&succession("web"), 64, ended, now()),
            Err(RkeyError::Exhausted { .. })
        ));
    }

    #[test]
    fn a_declared_uri_is_followed_before_a_stored_one() {
        let declared = rkey("elsewhere");
        let stored = rkey("web");
        assert_eq!(
            start(&succession("web"), Some(&declared), Some(&stored)),
            Start::Follow(declared)
        );
    }

    #[test]
    fn a_stored_rkey_outside_the_succession_starts_a_fresh_bind() {
        assert_eq!(
            start(&succession("web"), None, Some(&rkey("api"))),
            Start::Fresh
        );
        assert_eq!(
            start(&succession("web"), None, Some(&rkey("web-0f8e3c1a"))),
            Start::Keep(rkey("web-0f8e3c1a"))
        );
    }

    #[test]
    fn record_key_syntax_refuses_dots_and_slashes() {
        for bad in ["", ".", "..", "a/b", "a b", "é"] {
            assert!(Rkey::parse(bad).is_err(), "{bad:?} should be refused");
        }
        assert!(Rkey::parse(&"k".repeat(512)).is_ok());
        assert!(Rkey::parse(&"k".repeat(513)).is_err());
    }

    fn interop_lines(text: &str) -> impl Iterator<Item = &str> {
        text.lines()
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
    }

    #[test]
    fn record_key_syntax_agrees_with_the_atproto_interop_vectors() {
        let valid = include_str!("../tests/fixtures/interop/recordkey_syntax_valid.txt");
        let invalid = include_str!("../tests/fixtures/interop/recordkey_syntax_invalid.txt");
        for line in interop_lines(valid) {
            assert!(Rkey::parse(line).is_ok(), "{line:?} is a valid record key");
        }
        for line in interop_lines(invalid) {
            assert!(Rkey::parse(line).is_err(), "{line:?} is not a record key");
        }
    }

    proptest! {
        #[test]
        fn the_succession_is_stable_distinct_and_valid(
            name in "[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?",
            bytes in any::<[u8; 16]>(),
        ) {
            let name = Name::parse(&name).unwrap();
            let uid = Uid::from_bytes(bytes);
            let first: Vec<Rkey> = Succession::new(&name, &uid).keys().collect();
            let again: Vec<Rkey> = Succession::new(&name, &uid).keys().collect();
            prop_assert_eq!(&first, &again);
            prop_assert_eq!(first.len(), 65);
            prop_assert_eq!(first.iter().collect::<BTreeSet<_>>().len(), 65);
            prop_assert_eq!(first[0].as_str(), name.as_str());
            for (n, key) in first.iter().enumerate() {
                prop_assert!(key.as_str().len() <= 75);
                prop_assert_eq!(Succession::new(&name, &uid).position(key), u32::try_from(n).ok());
            }
        }
    }
}
