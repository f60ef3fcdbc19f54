//! How the account's index at `self` stands, as its writer last found it: how many live
//! deployments it lists of the most it may ([`MAX_LIVE`]), which published deployments wait
//! for room in a full one, and why it is not written at all when the record there is another
//! client's (newer or broken). The api and the window read this one type: the count in the
//! Deployments header, the wait on each row that has no room, the notice above the list.

use serde::Serialize;

use crate::index::MAX_LIVE;

/// The index at `self`, for the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct IndexHealth {
    /// Live entries it lists, as last read or written (none before the first write).
    pub live: Option<u32>,
    /// The most live entries it may list.
    pub max_live: u32,
    /// Deployments published but not listed for want of room, each as its record's
    /// `collection/rkey`.
    pub waiting_for_room: Vec<String>,
    /// What needs the owner's attention, in words: an index this version may not write over,
    /// or deployments waiting for room; none while all is well.
    pub problem: Option<String>,
}

impl Default for IndexHealth {
    fn default() -> Self {
        Self {
            live: None,
            max_live: u32::try_from(MAX_LIVE).unwrap_or(u32::MAX),
            waiting_for_room: Vec::new(),
            problem: None,
        }
    }
}

impl IndexHealth {
    /// The index as read or written: `live` entries listed, `waiting` for room.
    pub fn listing(live: usize, waiting: Vec<String>) -> Self {
        let problem = (!waiting.is_empty()).then(|| {
            format!(
                "The index at self already lists {MAX_LIVE} live deployments, the most it may: \
                 {} new deployment(s) are published but not listed until one ends. End or \
                 release a deployment you no longer need to make room",
                waiting.len()
            )
        });
        Self {
            live: Some(u32::try_from(live).unwrap_or(u32::MAX)),
            waiting_for_room: waiting,
            problem,
            ..Self::default()
        }
    }

    /// The record at `self` is no index this version may write over, for the reason `why`:
    /// nothing is written until it reads again; the counts last known stay.
    pub fn unreadable(self, why: &str) -> Self {
        Self {
            problem: Some(format!(
                "{why}. It was written by a newer or broken client, and is not written over: \
                 the deployments keep syncing, the index waits until it reads again"
            )),
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::IndexHealth;

    #[test]
    fn a_full_index_names_how_many_wait_and_what_to_do() {
        let health = IndexHealth::listing(256, vec!["computer.socialweb.infra/3abc".to_owned()]);
        assert_eq!(health.live, Some(256));
        assert_eq!(health.max_live, 256);
        assert_eq!(health.waiting_for_room, ["computer.socialweb.infra/3abc"]);
        let problem = health.problem.expect("a problem");
        assert!(problem.contains("256 live deployments"), "{problem}");
        assert!(problem.contains("1 new deployment(s)"), "{problem}");
        assert!(problem.contains("End or release"), "{problem}");
    }

    #[test]
    fn an_index_with_room_has_no_problem_and_an_unreadable_one_keeps_its_counts() {
        let health = IndexHealth::listing(12, Vec::new());
        assert_eq!(health.problem, None);
        let unreadable = health.unreadable("the record at self has $type x");
        assert_eq!(unreadable.live, Some(12));
        assert!(
            unreadable
                .problem
                .is_some_and(|why| why.starts_with("the record at self has $type x. It was"))
        );
        assert_eq!(IndexHealth::default().live, None);
    }
}
