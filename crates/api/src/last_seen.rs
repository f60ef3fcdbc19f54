//! What the window last saw of the gateway, kept for an offline start: the owner's clusters
//! (with their nodes and members) and when the feed last described them. At the next start the
//! Clusters section shows them at once, marked with that time, until the gateway answers.
//!
//! Invariants: kept in `accounts/<did>/clusters.json` beside the account's store, mode 0600,
//! written whole or not at all, only from what the live feed said (never from the cache
//! itself); an unreadable file is as good as none.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use swdesk_kernel::timestamp::Timestamp;

use crate::private_json;

/// The clusters (rows `R`) as the live feed last described them, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Seen<R> {
    /// When the feed last described them (RFC 3339).
    pub as_of: String,
    /// Every cluster, by name.
    pub clusters: Vec<R>,
}

/// The kept clusters of one account.
#[derive(Debug, Clone)]
pub struct LastSeen {
    file: PathBuf,
}

impl LastSeen {
    /// Those of the account whose store is `store_path`, kept beside it.
    pub fn beside(store_path: &Path) -> Self {
        Self {
            file: store_path.with_file_name("clusters.json"),
        }
    }

    /// What was kept, if anything readable was.
    pub fn read<R: DeserializeOwned>(&self) -> Option<Seen<R>> {
        private_json::read(&self.file)
    }

    /// Keeps `clusters` as seen live at `now`.
    pub fn keep<R: Serialize + Clone>(
        &self,
        clusters: &[R],
        now: Timestamp,
    ) -> std::io::Result<()> {
        let seen = Seen {
            as_of: now.to_rfc3339(),
            clusters: clusters.to_vec(),
        };
        private_json::write(&self.file, &seen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clusters_seen_live_come_back_with_their_time_and_a_broken_file_is_none() {
        let dir = tempfile::tempdir().expect("dir");
        let store = dir.path().join("accounts/did_plc_a/objects.sqlite");
        let kept = LastSeen::beside(&store);
        assert_eq!(kept.read::<serde_json::Value>(), None);
        let row = serde_json::json!({"name": "dev", "phase": "Ready"});
        let now = Timestamp::parse_rfc3339("2026-12-05T14:02:00Z").expect("time");
        kept.keep(std::slice::from_ref(&row), now).expect("kept");
        let seen = LastSeen::beside(&store)
            .read::<serde_json::Value>()
            .expect("read back");
        assert_eq!(seen.clusters, [row]);
        assert_eq!(seen.as_of, now.to_rfc3339());
        std::fs::write(store.with_file_name("clusters.json"), b"{not json").expect("write");
        assert_eq!(kept.read::<serde_json::Value>(), None);
    }
}
