//! The record at `computer.socialweb.infra/self`, the account's index (SPEC §2 "Index"):
//! [`index_record_problems`] returns its lexicon problems and the rules a lexicon cannot say,
//! every problem at once, each with its JSON Pointer and a fix.
//!
//! - the record holds the `index`, and nothing of a deployment (`description`, `contracts`,
//!   `status`): nothing else is ever written at `self`;
//! - one entry per deployment record (collection, rkey) in `live`, and one in `recentEnded`;
//! - a record listed in `recentEnded` is not also `live` (an ended record is never live again);
//! - no entry names the rkey `self`;
//! - `recentEnded` is newest first (by `endedAt`).
//!
//! The limits (256 live, 32 ended, `writer` of 64) are the lexicon's `maxLength`s. These are the
//! invariants [`crate::index`] keeps when it writes, checked on any index read or written.

use std::collections::BTreeMap;

use serde_json::Value;
use swdesk_lexicon::Problem;
use swdesk_lexicon::problem::{pointer_child, pointer_index};

use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::rkey::RESERVED;
use swdesk_kernel::timestamp::Timestamp;

const DEPLOYMENT_FIELDS: [&str; 3] = ["description", "contracts", "status"];

/// Every problem of the index record at `self`: the lexicon's, then the index rules'.
pub fn index_record_problems(record: &Value) -> Vec<Problem> {
    let collection = DeploymentKind::Infra.collection();
    let mut problems = swdesk_lexicon::validate::validate_record(collection, record);
    problems.extend(deployment_field_problems(record));
    match record.get("index") {
        None => problems.push(Problem::new(
            "/index",
            "The record at self has no index.",
            "Write the index at self, e.g. {\"index\": {\"updatedAt\": \"2026-12-02T18:00:00.000Z\"}}.",
        )),
        Some(index) => problems.extend(entry_problems(index)),
    }
    problems
}

fn deployment_field_problems(record: &Value) -> Vec<Problem> {
    let present = DEPLOYMENT_FIELDS
        .into_iter()
        .filter(|field| record.get(field).is_some());
    present
        .map(|field| {
            Problem::new(
                pointer_child("", field),
                format!("The record at self holds only the index, but it has {field}, which belongs to a deployment record."),
                format!("Remove {field} from the record at self."),
            )
        })
        .collect()
}

/// A listed deployment record: its collection and rkey.
type Key<'a> = (&'a str, &'a str);

fn key_of(entry: &Value) -> Option<Key<'_>> {
    let collection = entry.get("collection")?.as_str()?;
    Some((collection, entry.get("rkey")?.as_str()?))
}

fn entries<'v>(index: &'v Value, list: &str) -> &'v [Value] {
    index
        .get(list)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn entry_problems(index: &Value) -> Vec<Problem> {
    let ended = entries(index, "recentEnded");
    let (mut problems, ended_at) = list_problems("/index/recentEnded", ended);
    let (live, _) = list_problems("/index/live", entries(index, "live"));
    problems.extend(live);
    problems.extend(live_and_ended_problems(entries(index, "live"), &ended_at));
    problems.extend(order_problems(ended));
    problems
}

/// Duplicates and `self` rkeys of one list, and where each key first appears.
fn list_problems<'v>(path: &str, list: &'v [Value]) -> (Vec<Problem>, BTreeMap<Key<'v>, usize>) {
    let mut problems = Vec::new();
    let mut first: BTreeMap<Key<'v>, usize> = BTreeMap::new();
    for (at, key) in list
        .iter()
        .enumerate()
        .filter_map(|(at, e)| Some((at, key_of(e)?)))
    {
        let entry = pointer_index(path, at);
        if key.1 == RESERVED {
            problems.push(Problem::new(
                pointer_child(&entry, "rkey"),
                "The rkey self is the index's own, never a deployment's.",
                "List deployment records only.",
            ));
        }
        if let Some(earlier) = first.get(&key) {
            problems.push(Problem::new(
                entry,
                format!(
                    "{}/{} is listed twice (first at {path}/{earlier}).",
                    key.0, key.1
                ),
                "Keep one entry per deployment record.",
            ));
        } else {
            first.insert(key, at);
        }
    }
    (problems, first)
}

fn live_and_ended_problems(live: &[Value], ended: &BTreeMap<Key<'_>, usize>) -> Vec<Problem> {
    let listed = live
        .iter()
        .enumerate()
        .filter_map(|(at, e)| Some((at, key_of(e)?)));
    listed
        .filter_map(|(at, key)| {
            let ended_at = ended.get(&key)?;
            Some(Problem::new(
                pointer_index("/index/live", at),
                format!("{}/{} is live and also ended (/index/recentEnded/{ended_at}); an ended record is never live again.", key.0, key.1),
                "Remove it from live.",
            ))
        })
        .collect()
}

/// Each `recentEnded` entry that ended later than the one before it.
fn order_problems(ended: &[Value]) -> Vec<Problem> {
    let times: Vec<Option<Timestamp>> = ended.iter().map(ended_time).collect();
    let pairs = times.windows(2).enumerate();
    pairs
        .filter(|(_, pair)| matches!(pair, [Some(before), Some(this)] if this > before))
        .map(|(at, _)| {
            Problem::new(
                pointer_child(&pointer_index("/index/recentEnded", at + 1), "endedAt"),
                format!("This entry ended later than /index/recentEnded/{at}, but recentEnded is newest first."),
                "Order recentEnded by endedAt, newest first.",
            )
        })
        .collect()
}

fn ended_time(entry: &Value) -> Option<Timestamp> {
    entry.get("endedAt")?.as_str()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{DESKTOP_WRITER, LiveEntry, empty, end, upsert};
    use crate::infra::EndReason;
    use swdesk_kernel::rkey::Rkey;
    use swdesk_lexicon::Record;
    use swdesk_lexicon::computer::socialweb::infra::Index;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_millis(seconds * 1000).unwrap()
    }

    fn record_of(index: Index) -> Value {
        let record = swdesk_lexicon::Infra {
            index: Some(index),
            created_at: at(0).to_rfc3339(),
            ..Default::default()
        };
        record.to_record_value().unwrap()
    }

    #[test]
    fn an_index_the_index_module_wrote_has_no_problem() {
        let mut index = empty(at(0));
        let none = crate::index::Absences::new();
        for name in ["a", "b", "c"] {
            let rkey = Rkey::parse(name).unwrap();
            let entry = LiveEntry {
                kind: DeploymentKind::Infra,
                rkey: &rkey,
                created_at: at(0),
                expires_at: None,
                writer: DESKTOP_WRITER,
            };
            upsert(&mut index, &entry, &none, at(1)).unwrap();
        }
        for (seconds, name) in [(2, "a"), (3, "b")] {
            let rkey = Rkey::parse(name).unwrap();
            let ended = at(seconds);
            let kind = DeploymentKind::Infra;
            end(
                &mut index,
                kind,
                &rkey,
                ended,
                EndReason::Deleted,
                &none,
                ended,
            )
            .unwrap();
        }
        assert_eq!(index_record_problems(&record_of(index)), vec![]);
    }

    #[test]
    fn an_out_of_order_ended_list_is_reported_at_the_later_entry() {
        let entry = |rkey: &str, seconds: i64| {
            serde_json::json!({"collection": "computer.socialweb.infra", "rkey": rkey,
                "endedAt": at(seconds).to_rfc3339(), "endReason": "deleted"})
        };
        let ended = [entry("a", 5), entry("b", 3), entry("c", 4)];
        let paths: Vec<String> = order_problems(&ended).into_iter().map(|p| p.path).collect();
        assert_eq!(paths, ["/index/recentEnded/2/endedAt"]);
    }
}
