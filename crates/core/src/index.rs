//! The account's index of deployments, `computer.socialweb.infra/self` (SPEC §2 "Index"): pure
//! mutations of the lexicon's [`Index`] record, which the infra controller then writes with a
//! compare-and-swap on its cid.
//!
//! Operations: [`upsert`] adds or refreshes a live entry, [`end`] moves one to `recentEnded`,
//! [`prune`] drops entries whose records are gone; [`readable`] says whether the record at
//! `self` is an index this version may rewrite at all. Every operation first tidies the index
//! (below), and sets `updatedAt` to `now` exactly when it changed something, so an unchanged
//! index is never written again.
//!
//! Invariants, after every operation:
//! - one entry per (collection, rkey): duplicates keep their first occurrence, and a key in
//!   `recentEnded` is never also live (an ended record is never live again);
//! - `recentEnded` is newest first and holds at most [`MAX_ENDED`]; the oldest fall off;
//! - `live` never grows past [`MAX_LIVE`]. A live entry is *still live* unless its record has
//!   been gone for [`GONE_AFTER`] (the caller passes when each record was first seen missing,
//!   as [`Absences`]) or it is past its `expiresAt`. Gone entries are dropped by every
//!   operation. Expired entries are evicted only to make room for an add, earliest expiry
//!   first, and move to `recentEnded` with reason `deadline`. A still-live entry is never
//!   evicted: adding to an index full of them is refused with [`IndexError::Full`], and the
//!   index is left as it was;
//! - `writer` is cut to its longest prefix of at most [`MAX_WRITER_BYTES`] UTF-8 bytes that
//!   ends on a character boundary (so at most 64 characters, and valid for the lexicon's
//!   `maxLength: 64`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::rkey::Rkey;
use swdesk_kernel::timestamp::Timestamp;
use swdesk_lexicon::computer::socialweb::infra::{
    DeploymentCollection, Index, IndexEnded, IndexEntry, IndexEntryWriter,
};
use swdesk_lexicon::{Infra, Record as _};
use thiserror::Error;

use crate::infra::EndReason;
use crate::publish::record_end_reason;

/// The most live entries.
pub const MAX_LIVE: usize = 256;
/// The most recently ended entries.
pub const MAX_ENDED: usize = 32;
/// How long a record must have been missing before its entry counts as gone.
pub const GONE_AFTER: Duration = Duration::from_secs(600);
/// The longest `writer`, in UTF-8 bytes.
pub const MAX_WRITER_BYTES: usize = 64;
/// This app's `writer`.
pub const DESKTOP_WRITER: &str = "desktop";

/// One entry's identity: its record's collection and rkey.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntryKey {
    collection: String,
    rkey: String,
}

impl EntryKey {
    /// The key of the record `rkey` of a deployment `kind`.
    pub fn new(kind: DeploymentKind, rkey: &Rkey) -> Self {
        Self {
            collection: kind.collection().to_owned(),
            rkey: rkey.as_str().to_owned(),
        }
    }

    fn of(collection: &DeploymentCollection, rkey: &str) -> Self {
        Self {
            collection: collection.as_str().to_owned(),
            rkey: rkey.to_owned(),
        }
    }

    /// The key of a live entry.
    pub fn of_live(entry: &IndexEntry) -> Self {
        Self::of(&entry.collection, &entry.rkey)
    }

    fn of_ended(entry: &IndexEnded) -> Self {
        Self::of(&entry.collection, &entry.rkey)
    }
}

/// Since when each record is known to be missing (records not named here exist).
pub type Absences = BTreeMap<EntryKey, Timestamp>;

/// A live deployment to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveEntry<'a> {
    /// Infra or EphemeralInfra.
    pub kind: DeploymentKind,
    /// The record's rkey.
    pub rkey: &'a Rkey,
    /// The record's `createdAt`.
    pub created_at: Timestamp,
    /// When it expires (EphemeralInfra).
    pub expires_at: Option<Timestamp>,
    /// Who wrote it, e.g. [`DESKTOP_WRITER`].
    pub writer: &'a str,
}

/// Why the index refused a change.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IndexError {
    /// Every live slot holds a still-live deployment.
    #[error("the index already lists {MAX_LIVE} live deployments; end one before adding another")]
    Full,
    /// The record has ended: it is never live again.
    #[error("{rkey} in {collection} has ended and can never be live again; use a successor rkey")]
    Ended {
        /// The collection.
        collection: String,
        /// The rkey.
        rkey: String,
    },
}

/// Whether the index changed (and so must be written).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IndexChange {
    /// Nothing changed: do not write.
    Unchanged,
    /// Something changed; `updatedAt` is `now`.
    Changed,
}

/// The two lists of an index, taken out for one operation.
struct Lists {
    live: Vec<IndexEntry>,
    ended: Vec<IndexEnded>,
}

/// Runs `operation` on the tidied lists of `index`; on success puts them back and stamps
/// `updatedAt` when anything changed, on error leaves `index` untouched.
fn apply(
    index: &mut Index,
    absences: &Absences,
    now: Timestamp,
    operation: impl FnOnce(&mut Lists) -> Result<(), IndexError>,
) -> Result<IndexChange, IndexError> {
    let mut lists = Lists {
        live: index.live.clone().unwrap_or_default(),
        ended: index.recent_ended.clone().unwrap_or_default(),
    };
    tidy(&mut lists, absences, now);
    operation(&mut lists)?;
    let live = put_back(index.live.is_some(), lists.live);
    let ended = put_back(index.recent_ended.is_some(), lists.ended);
    if live == index.live && ended == index.recent_ended {
        return Ok(IndexChange::Unchanged);
    }
    index.live = live;
    index.recent_ended = ended;
    index.updated_at = now.to_rfc3339();
    Ok(IndexChange::Changed)
}

/// `None` for a list that was absent and is still empty, so tidying adds no field.
fn put_back<T>(was_present: bool, list: Vec<T>) -> Option<Vec<T>> {
    (was_present || !list.is_empty()).then_some(list)
}

/// Dedupes both lists, removes ended keys and gone records from `live`, caps `recentEnded`.
fn tidy(lists: &mut Lists, absences: &Absences, now: Timestamp) {
    let mut seen = BTreeSet::new();
    lists
        .ended
        .retain(|entry| seen.insert(EntryKey::of_ended(entry)));
    lists.ended.truncate(MAX_ENDED);
    let ended: BTreeSet<EntryKey> = lists.ended.iter().map(EntryKey::of_ended).collect();
    let mut seen = BTreeSet::new();
    lists.live.retain(|entry| {
        let key = EntryKey::of_live(entry);
        !ended.contains(&key) && !is_gone(&key, absences, now) && seen.insert(key)
    });
}

fn is_gone(key: &EntryKey, absences: &Absences, now: Timestamp) -> bool {
    absences
        .get(key)
        .is_some_and(|since| now.since(*since) >= GONE_AFTER)
}

fn expiry(entry: &IndexEntry) -> Option<Timestamp> {
    entry.expires_at.as_deref().and_then(|at| at.parse().ok())
}

/// Adds `entry` to `live`, or refreshes it (`addedAt` moves only when a field changed).
pub fn upsert(
    index: &mut Index,
    entry: &LiveEntry<'_>,
    absences: &Absences,
    now: Timestamp,
) -> Result<IndexChange, IndexError> {
    let key = EntryKey::new(entry.kind, entry.rkey);
    apply(index, absences, now, |lists| {
        if lists
            .ended
            .iter()
            .any(|ended| EntryKey::of_ended(ended) == key)
        {
            return Err(IndexError::Ended {
                collection: key.collection.clone(),
                rkey: key.rkey.clone(),
            });
        }
        match lists
            .live
            .iter_mut()
            .find(|live| EntryKey::of_live(live) == key)
        {
            Some(existing) => refresh(existing, entry, now),
            None => add(lists, entry, now)?,
        }
        Ok(())
    })
}

fn refresh(existing: &mut IndexEntry, entry: &LiveEntry<'_>, now: Timestamp) {
    let wanted = new_entry(entry, now);
    let same = existing.created_at == wanted.created_at
        && existing.expires_at == wanted.expires_at
        && existing.writer == wanted.writer;
    if !same {
        existing.created_at = wanted.created_at;
        existing.expires_at = wanted.expires_at;
        existing.writer = wanted.writer;
        existing.added_at = wanted.added_at;
    }
}

fn add(lists: &mut Lists, entry: &LiveEntry<'_>, now: Timestamp) -> Result<(), IndexError> {
    if lists.live.len() >= MAX_LIVE {
        evict_one_expired(lists, now)?;
    }
    lists.live.push(new_entry(entry, now));
    Ok(())
}

/// Moves the live entry with the earliest past expiry to `recentEnded`, or refuses.
fn evict_one_expired(lists: &mut Lists, now: Timestamp) -> Result<(), IndexError> {
    let oldest = lists
        .live
        .iter()
        .enumerate()
        .filter_map(|(at, entry)| {
            expiry(entry)
                .filter(|expiry| *expiry <= now)
                .map(|e| (e, at))
        })
        .min();
    let (expired_at, at) = oldest.ok_or(IndexError::Full)?;
    let entry = lists.live.remove(at);
    push_ended(
        lists,
        &entry.collection,
        &entry.rkey,
        expired_at,
        EndReason::Deadline,
    );
    Ok(())
}

fn new_entry(entry: &LiveEntry<'_>, now: Timestamp) -> IndexEntry {
    IndexEntry {
        collection: DeploymentCollection::from(entry.kind.collection()),
        rkey: entry.rkey.as_str().to_owned(),
        created_at: entry.created_at.to_rfc3339(),
        expires_at: entry.expires_at.map(Timestamp::to_rfc3339),
        added_at: now.to_rfc3339(),
        writer: IndexEntryWriter::from(trim_writer(entry.writer)),
        extra: serde_json::Map::new(),
    }
}

/// Moves the deployment `kind`/`rkey` from `live` to the front of `recentEnded`.
pub fn end(
    index: &mut Index,
    kind: DeploymentKind,
    rkey: &Rkey,
    ended_at: Timestamp,
    reason: EndReason,
    absences: &Absences,
    now: Timestamp,
) -> Result<IndexChange, IndexError> {
    let key = EntryKey::new(kind, rkey);
    apply(index, absences, now, |lists| {
        if lists
            .ended
            .iter()
            .any(|ended| EntryKey::of_ended(ended) == key)
        {
            return Ok(());
        }
        lists.live.retain(|entry| EntryKey::of_live(entry) != key);
        let collection = DeploymentCollection::from(kind.collection());
        push_ended(lists, &collection, rkey.as_str(), ended_at, reason);
        Ok(())
    })
}

fn push_ended(
    lists: &mut Lists,
    collection: &DeploymentCollection,
    rkey: &str,
    ended_at: Timestamp,
    reason: EndReason,
) {
    let key = EntryKey::of(collection, rkey);
    lists.ended.retain(|entry| EntryKey::of_ended(entry) != key);
    lists.ended.insert(
        0,
        IndexEnded {
            collection: collection.clone(),
            rkey: rkey.to_owned(),
            ended_at: ended_at.to_rfc3339(),
            end_reason: record_end_reason(reason),
            extra: serde_json::Map::new(),
        },
    );
    lists.ended.truncate(MAX_ENDED);
}

/// Tidies the index: drops entries whose records have been gone for [`GONE_AFTER`].
pub fn prune(index: &mut Index, absences: &Absences, now: Timestamp) -> IndexChange {
    apply(index, absences, now, |_| Ok(())).unwrap_or(IndexChange::Unchanged)
}

/// `writer` cut to at most [`MAX_WRITER_BYTES`] bytes, on a character boundary.
pub fn trim_writer(writer: &str) -> &str {
    let mut end = writer.len().min(MAX_WRITER_BYTES);
    while !writer.is_char_boundary(end) {
        end -= 1;
    }
    &writer[..end]
}

/// The record at `self` as an index this version may rewrite, or why it may not: it is of
/// another `$type`, does not validate against the lexicon, does not read, or holds no
/// `index`. Such a record is another client's (newer, or broken) and is never written over:
/// the writer stops and the owner is told. Fields this version does not know are kept by the
/// record type, so a readable index round-trips whole.
pub fn readable(record: &serde_json::Value) -> Result<Infra, String> {
    const COLLECTION: &str = "computer.socialweb.infra";
    if record.get("$type").and_then(serde_json::Value::as_str) != Some(COLLECTION) {
        return Err(format!("the record at self is not a {COLLECTION} record"));
    }
    let problems = swdesk_lexicon::validate::validate_record(COLLECTION, record);
    if !problems.is_empty() {
        let described: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(format!(
            "the index at self does not validate: {}",
            described.join("; ")
        ));
    }
    let infra = Infra::from_record_value(record.clone())
        .map_err(|error| format!("the index at self does not read: {error}"))?;
    if infra.index.is_none() {
        return Err("the record at self holds no index".to_owned());
    }
    Ok(infra)
}

/// An empty index, as written the first time (`createRecord`).
pub fn empty(now: Timestamp) -> Index {
    Index {
        updated_at: now.to_rfc3339(),
        ..Index::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_millis(seconds * 1000).unwrap()
    }

    fn rkey(text: &str) -> Rkey {
        Rkey::parse(text).unwrap()
    }

    fn live<'a>(rkey: &'a Rkey, expires_at: Option<i64>) -> LiveEntry<'a> {
        LiveEntry {
            kind: DeploymentKind::Infra,
            rkey,
            created_at: at(0),
            expires_at: expires_at.map(at),
            writer: DESKTOP_WRITER,
        }
    }

    /// Ends the Infra `rkey` as deleted at `seconds`.
    fn end_at(index: &mut Index, rkey: &Rkey, seconds: i64) -> Result<IndexChange, IndexError> {
        let none = Absences::new();
        end(
            index,
            DeploymentKind::Infra,
            rkey,
            at(seconds),
            EndReason::Deleted,
            &none,
            at(seconds),
        )
    }

    fn live_keys(index: &Index) -> Vec<String> {
        index
            .live
            .iter()
            .flatten()
            .map(|entry| entry.rkey.clone())
            .collect()
    }

    fn ended_keys(index: &Index) -> Vec<String> {
        index
            .recent_ended
            .iter()
            .flatten()
            .map(|entry| entry.rkey.clone())
            .collect()
    }

    #[test]
    fn adding_a_deployment_lists_it_and_stamps_the_index() {
        let mut index = empty(at(0));
        let web = rkey("web");
        assert_eq!(
            upsert(&mut index, &live(&web, None), &Absences::new(), at(5)),
            Ok(IndexChange::Changed)
        );
        assert_eq!(live_keys(&index), ["web"]);
        assert_eq!(index.updated_at, at(5).to_rfc3339());
        assert_eq!(
            index.live.as_ref().unwrap()[0].writer,
            IndexEntryWriter::Desktop
        );
    }

    #[test]
    fn refreshing_an_unchanged_entry_changes_nothing() {
        let mut index = empty(at(0));
        let web = rkey("web");
        upsert(&mut index, &live(&web, None), &Absences::new(), at(5)).unwrap();
        let before = index.clone();
        assert_eq!(
            upsert(&mut index, &live(&web, None), &Absences::new(), at(9)),
            Ok(IndexChange::Unchanged)
        );
        assert_eq!(index, before);
    }

    #[test]
    fn refreshing_a_changed_entry_moves_its_added_at() {
        let mut index = empty(at(0));
        let web = rkey("web");
        upsert(&mut index, &live(&web, None), &Absences::new(), at(5)).unwrap();
        upsert(&mut index, &live(&web, Some(100)), &Absences::new(), at(9)).unwrap();
        let entry = &index.live.as_ref().unwrap()[0];
        assert_eq!(entry.added_at, at(9).to_rfc3339());
        assert_eq!(entry.expires_at, Some(at(100).to_rfc3339()));
    }

    #[test]
    fn ending_moves_the_entry_to_the_front_of_recent_ended() {
        let mut index = empty(at(0));
        let (a, b) = (rkey("a"), rkey("b"));
        for key in [&a, &b] {
            upsert(&mut index, &live(key, None), &Absences::new(), at(1)).unwrap();
        }
        end_at(&mut index, &a, 2).unwrap();
        end_at(&mut index, &b, 3).unwrap();
        assert_eq!(live_keys(&index), Vec::<String>::new());
        assert_eq!(ended_keys(&index), ["b", "a"]);
    }

    #[test]
    fn ending_twice_changes_nothing_the_second_time() {
        let mut index = empty(at(0));
        let a = rkey("a");
        end_at(&mut index, &a, 2).unwrap();
        let again = end_at(&mut index, &a, 3);
        assert_eq!(again, Ok(IndexChange::Unchanged));
    }

    #[test]
    fn an_ended_deployment_cannot_be_listed_live_again() {
        let mut index = empty(at(0));
        let a = rkey("a");
        end_at(&mut index, &a, 2).unwrap();
        let error = upsert(&mut index, &live(&a, None), &Absences::new(), at(3)).unwrap_err();
        assert!(matches!(error, IndexError::Ended { .. }));
    }

    #[test]
    fn only_the_32_newest_ended_entries_are_kept() {
        let mut index = empty(at(0));
        for n in 0..40 {
            let key = rkey(&format!("d{n}"));
            end_at(&mut index, &key, n).unwrap();
        }
        let ended = ended_keys(&index);
        assert_eq!(ended.len(), 32);
        assert_eq!(ended.first().map(String::as_str), Some("d39"));
        assert_eq!(ended.last().map(String::as_str), Some("d8"));
    }

    #[test]
    fn a_record_gone_for_ten_minutes_drops_its_entry_and_not_before() {
        let mut index = empty(at(0));
        let web = rkey("web");
        upsert(&mut index, &live(&web, None), &Absences::new(), at(0)).unwrap();
        let absences = Absences::from([(EntryKey::new(DeploymentKind::Infra, &web), at(100))]);
        assert_eq!(
            prune(&mut index, &absences, at(699)),
            IndexChange::Unchanged
        );
        assert_eq!(prune(&mut index, &absences, at(700)), IndexChange::Changed);
        assert_eq!(live_keys(&index), Vec::<String>::new());
    }

    fn full_index(expires_at: Option<i64>) -> Index {
        let mut index = empty(at(0));
        for n in 0..MAX_LIVE {
            let key = rkey(&format!("d{n}"));
            upsert(&mut index, &live(&key, expires_at), &Absences::new(), at(0)).unwrap();
        }
        index
    }

    #[test]
    fn a_full_index_of_still_live_entries_refuses_an_add_and_stays_as_it_was() {
        let mut index = full_index(None);
        let before = index.clone();
        let extra = rkey("extra");
        assert_eq!(
            upsert(&mut index, &live(&extra, None), &Absences::new(), at(10)),
            Err(IndexError::Full)
        );
        assert_eq!(index, before);
    }

    #[test]
    fn a_full_index_makes_room_by_ending_the_earliest_expired_entry() {
        let mut index = full_index(Some(1000));
        let first = rkey("d0");
        upsert(
            &mut index,
            &live(&first, Some(500)),
            &Absences::new(),
            at(1),
        )
        .unwrap();
        let extra = rkey("extra");
        upsert(&mut index, &live(&extra, None), &Absences::new(), at(600)).unwrap();
        assert_eq!(live_keys(&index).len(), MAX_LIVE);
        assert!(!live_keys(&index).contains(&"d0".to_owned()));
        let ended = &index.recent_ended.as_ref().unwrap()[0];
        assert_eq!(
            (ended.rkey.as_str(), &ended.end_reason),
            (
                "d0",
                &swdesk_lexicon::computer::socialweb::infra::EndReason::Deadline
            )
        );
        assert_eq!(ended.ended_at, at(500).to_rfc3339());
    }

    #[test]
    fn duplicates_written_by_another_device_are_merged() {
        let mut index = empty(at(0));
        let web = rkey("web");
        upsert(&mut index, &live(&web, None), &Absences::new(), at(0)).unwrap();
        let copy = index.live.as_ref().unwrap()[0].clone();
        index.live.as_mut().unwrap().push(copy);
        assert_eq!(
            prune(&mut index, &Absences::new(), at(1)),
            IndexChange::Changed
        );
        assert_eq!(live_keys(&index), ["web"]);
    }

    #[test]
    fn a_long_writer_is_cut_on_a_character_boundary() {
        assert_eq!(trim_writer("desktop"), "desktop");
        assert_eq!(trim_writer(&"w".repeat(80)).len(), 64);
        let wide = "é".repeat(40);
        let cut = trim_writer(&wide);
        assert_eq!((cut.len(), cut.chars().count()), (64, 32));
        let odd = format!("a{}", "é".repeat(40));
        assert_eq!(trim_writer(&odd).len(), 63);
    }

    /// One step of a random history of the index.
    #[derive(Debug, Clone)]
    enum Step {
        Add { n: u16, ttl: Option<u16> },
        End { n: u16 },
        Vanish { n: u16 },
        Wait { seconds: u16 },
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            12 => (0u16..400).prop_map(|n| Step::Add { n, ttl: None }),
            4 => (0u16..400, 1u16..3000).prop_map(|(n, ttl)| Step::Add { n, ttl: Some(ttl) }),
            1 => (0u16..400).prop_map(|n| Step::End { n }),
            1 => (0u16..400).prop_map(|n| Step::Vanish { n }),
            1 => (0u16..300).prop_map(|seconds| Step::Wait { seconds }),
        ]
    }

    fn still_live(entry: &IndexEntry, absences: &Absences, now: Timestamp) -> bool {
        !is_gone(&EntryKey::of_live(entry), absences, now) && expiry(entry).is_none_or(|e| e > now)
    }

    /// A random history being played against one index.
    struct History {
        index: Index,
        absences: Absences,
        now: Timestamp,
    }

    impl History {
        /// Plays `step`; returns the rkey it ended, if any. An add refused as full must find
        /// every live entry still live.
        fn play(&mut self, step: Step) -> Result<Option<String>, TestCaseError> {
            let now = self.now;
            match step {
                Step::Add { n, ttl } => {
                    let key = rkey(&format!("d{n}"));
                    let expires_at = ttl.map(|t| now.saturating_add(Duration::from_secs(t.into())));
                    let entry = LiveEntry {
                        expires_at,
                        ..live(&key, None)
                    };
                    let before = self.index.live.clone().unwrap_or_default();
                    if upsert(&mut self.index, &entry, &self.absences, now) == Err(IndexError::Full)
                    {
                        prop_assert!(before.iter().all(|e| still_live(e, &self.absences, now)));
                    }
                }
                Step::End { n } => {
                    let key = rkey(&format!("d{n}"));
                    let reason = EndReason::Deleted;
                    end(
                        &mut self.index,
                        DeploymentKind::Infra,
                        &key,
                        now,
                        reason,
                        &self.absences,
                        now,
                    )
                    .unwrap();
                    return Ok(Some(key.to_string()));
                }
                Step::Vanish { n } => {
                    let key = EntryKey::new(DeploymentKind::Infra, &rkey(&format!("d{n}")));
                    self.absences.entry(key).or_insert(now);
                }
                Step::Wait { seconds } => {
                    self.now = now.saturating_add(Duration::from_secs(seconds.into()))
                }
            }
            Ok(None)
        }

        /// The limits and uniqueness hold, and every entry of `before` that is still live
        /// (and was not just ended) is still listed.
        fn check(
            &self,
            before: &[IndexEntry],
            ended_now: Option<&str>,
        ) -> Result<(), TestCaseError> {
            let live = self.index.live.clone().unwrap_or_default();
            let ended = self.index.recent_ended.clone().unwrap_or_default();
            prop_assert!(live.len() <= MAX_LIVE && ended.len() <= MAX_ENDED);
            let live_set: BTreeSet<EntryKey> = live.iter().map(EntryKey::of_live).collect();
            let ended_set: BTreeSet<EntryKey> = ended.iter().map(EntryKey::of_ended).collect();
            prop_assert_eq!((live_set.len(), ended_set.len()), (live.len(), ended.len()));
            prop_assert!(live_set.is_disjoint(&ended_set));
            let kept = before
                .iter()
                .filter(|e| still_live(e, &self.absences, self.now));
            for entry in kept.filter(|e| ended_now != Some(e.rkey.as_str())) {
                prop_assert!(
                    live_set.contains(&EntryKey::of_live(entry)),
                    "lost {}",
                    entry.rkey
                );
            }
            Ok(())
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn the_index_keeps_its_limits_and_never_loses_a_still_live_entry(
            filled in 200u16..=256,
            steps in proptest::collection::vec(step(), 1..400),
        ) {
            let mut history = History { index: empty(at(0)), absences: Absences::new(), now: at(0) };
            for n in 0..filled {
                let ttl = (n % 3 == 0).then_some(60 + n);
                history.play(Step::Add { n: 1000 + n, ttl })?;
            }
            for step in steps {
                let before = history.index.live.clone().unwrap_or_default();
                let ended_now = history.play(step)?;
                history.check(&before, ended_now.as_deref())?;
            }
        }
    }
}

#[cfg(test)]
mod readable_tests {
    use serde_json::json;

    use super::readable;

    fn index_record() -> serde_json::Value {
        json!({
            "$type": "computer.socialweb.infra",
            "createdAt": "2026-12-01T00:00:00.000Z",
            "index": {"updatedAt": "2026-12-01T00:00:00.000Z", "live": []},
        })
    }

    #[test]
    fn an_index_with_fields_this_version_does_not_know_reads_and_keeps_them() {
        let mut record = index_record();
        record["index"]["shards"] = json!(["a", "b"]);
        record["newerField"] = json!({"x": 1});
        let infra = readable(&record).unwrap();
        let back = swdesk_lexicon::Record::to_record_value(&infra).unwrap();
        assert_eq!(back["index"]["shards"], json!(["a", "b"]));
        assert_eq!(back["newerField"], json!({"x": 1}));
    }

    #[test]
    fn a_record_at_self_that_is_no_index_this_version_reads_is_refused_with_why() {
        let mut other_type = index_record();
        other_type["$type"] = json!("computer.socialweb.infraIndexV2");
        let mut broken = index_record();
        broken["index"]["live"] = json!("not a list");
        let mut no_index = index_record();
        no_index.as_object_mut().unwrap().remove("index");
        for (record, why) in [
            (other_type, "is not a computer.socialweb.infra record"),
            (broken, "does not validate"),
            (no_index, "holds no index"),
            (json!("text"), "is not a"),
        ] {
            let refused = readable(&record).unwrap_err();
            assert!(refused.contains(why), "{refused}");
        }
    }
}
