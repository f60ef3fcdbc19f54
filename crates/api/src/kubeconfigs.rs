//! The kubeconfigs this installation saved for an account, remembered across restarts: which
//! cluster, where the file is, the server, when its certificate expires. Read back, each says
//! whether it still holds: its file gone, its certificate expired, or its cluster no longer
//! at the gateway (drift between what the owner thinks they have and what works), with the fix;
//! [`KeptKubeconfigs::forget`] is the fix "remove the file".
//!
//! Invariants: only what a kubeconfig's summary shows is kept (never its key or certificate),
//! in `accounts/<did>/kubeconfigs.json` beside the account's store, mode 0600, written whole
//! or not at all; one entry per file path (the latest save wins), at most [`KEPT_CAP`]; only a
//! file this installation saved and still remembers is ever removed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use swdesk_kernel::timestamp::Timestamp;

use crate::clusters::SavedKubeconfig;
use crate::private_json;

/// The most kubeconfigs remembered; the oldest go first.
pub const KEPT_CAP: usize = 200;

/// One kubeconfig saved here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Kept {
    /// The cluster it is for.
    pub cluster: String,
    /// What was saved.
    pub saved: SavedKubeconfig,
}

/// A kept kubeconfig as the window shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct KubeconfigView {
    /// The cluster it is for.
    pub cluster: String,
    /// What was saved.
    pub saved: SavedKubeconfig,
    /// Why it no longer works, with the fix, when it does not.
    pub problem: Option<String>,
}

/// The kubeconfigs saved for one account.
#[derive(Debug, Clone)]
pub struct KeptKubeconfigs {
    file: PathBuf,
}

impl KeptKubeconfigs {
    /// Those of the account whose store is `store_path`, kept beside it.
    pub fn beside(store_path: &Path) -> Self {
        Self {
            file: store_path.with_file_name("kubeconfigs.json"),
        }
    }

    /// Every kubeconfig remembered, oldest first (none when the file is missing or unreadable).
    pub fn list(&self) -> Vec<Kept> {
        private_json::read(&self.file).unwrap_or_default()
    }

    /// Remembers `saved` for `cluster`, replacing what was kept for the same file.
    pub fn remember(&self, cluster: &str, saved: &SavedKubeconfig) -> std::io::Result<()> {
        let mut kept = self.list();
        kept.retain(|entry| entry.saved.path != saved.path);
        kept.push(Kept {
            cluster: cluster.to_owned(),
            saved: saved.clone(),
        });
        let excess = kept.len().saturating_sub(KEPT_CAP);
        kept.drain(..excess);
        self.write(&kept)
    }

    /// Removes the kubeconfig file at `path` and forgets it; `false`, removing nothing, when
    /// `path` is not a file this installation saved and remembers. A file already gone is
    /// forgotten all the same.
    pub fn forget(&self, path: &str) -> std::io::Result<bool> {
        let mut kept = self.list();
        let before = kept.len();
        kept.retain(|entry| entry.saved.path != path);
        if kept.len() == before {
            return Ok(false);
        }
        match std::fs::remove_file(path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(error),
            _ => {}
        }
        self.write(&kept).map(|()| true)
    }

    fn write(&self, kept: &[Kept]) -> std::io::Result<()> {
        private_json::write(&self.file, kept)
    }
}

/// Where the kept kubeconfigs are checked against: now, which files exist, and the clusters the
/// gateway's feed lists (`None` while it has not delivered them: no cluster is called gone).
#[allow(missing_debug_implementations)] // holds a closure
pub struct World<'a> {
    /// The time to check expiry against.
    pub now: Timestamp,
    /// Whether a file is there.
    pub exists: &'a dyn Fn(&Path) -> bool,
    /// The clusters that exist, when known.
    pub clusters: Option<&'a [String]>,
}

/// `kept` as the window shows it in `world`.
pub fn views(kept: Vec<Kept>, world: &World<'_>) -> Vec<KubeconfigView> {
    kept.into_iter()
        .map(|entry| {
            let problem = problem(&entry, world);
            KubeconfigView {
                cluster: entry.cluster,
                saved: entry.saved,
                problem,
            }
        })
        .collect()
}

fn problem(entry: &Kept, world: &World<'_>) -> Option<String> {
    let saved = &entry.saved;
    if !(world.exists)(Path::new(&saved.path)) {
        return Some("its file is gone; download it again if you still need it".to_owned());
    }
    if world
        .clusters
        .is_some_and(|clusters| !clusters.contains(&entry.cluster))
    {
        return Some("its cluster no longer exists at the gateway: remove the file".to_owned());
    }
    let now = world.now;
    let expires = saved
        .expires_at
        .as_deref()
        .and_then(|text| Timestamp::parse_rfc3339(text).ok())?;
    (expires <= now).then(|| "its certificate has expired: renew it, or remove the file".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(path: &str, expires_at: Option<&str>) -> SavedKubeconfig {
        SavedKubeconfig {
            path: path.into(),
            server: "https://127.0.0.1:6443".into(),
            expires_at: expires_at.map(str::to_owned),
            subject: "did:plc:owner".into(),
        }
    }

    fn at(text: &str) -> Timestamp {
        Timestamp::parse_rfc3339(text).expect("time")
    }

    #[test]
    fn a_kubeconfig_is_remembered_once_per_file_and_survives_a_new_reader() {
        let dir = tempfile::tempdir().expect("dir");
        let store = dir.path().join("accounts/did_plc_a/objects.sqlite");
        let kept = KeptKubeconfigs::beside(&store);
        assert!(kept.list().is_empty());
        kept.remember("dev", &saved("/k/dev", Some("2026-12-05T12:00:00Z")))
            .expect("kept");
        kept.remember("prod", &saved("/k/prod", None))
            .expect("kept");
        kept.remember("dev", &saved("/k/dev", Some("2026-12-05T13:00:00Z")))
            .expect("kept");
        let again = KeptKubeconfigs::beside(&store).list();
        let paths: Vec<_> = again
            .iter()
            .map(|entry| entry.saved.path.as_str())
            .collect();
        assert_eq!(
            paths,
            ["/k/prod", "/k/dev"],
            "the latest save of a file wins"
        );
        assert_eq!(
            again[1].saved.expires_at.as_deref(),
            Some("2026-12-05T13:00:00Z")
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(store.with_file_name("kubeconfigs.json"))
                .expect("file")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn only_a_remembered_file_is_removed_and_forgotten() {
        let dir = tempfile::tempdir().expect("dir");
        let kept = KeptKubeconfigs::beside(&dir.path().join("objects.sqlite"));
        let file = dir.path().join("dev.kubeconfig");
        let stranger = dir.path().join("other.txt");
        std::fs::write(&file, "kubeconfig").expect("file");
        std::fs::write(&stranger, "keep me").expect("file");
        let path = file.display().to_string();
        kept.remember("dev", &saved(&path, None)).expect("kept");

        assert!(!kept.forget(&stranger.display().to_string()).expect("io"));
        assert!(stranger.exists(), "a file never saved here is left alone");
        assert!(kept.forget(&path).expect("io"));
        assert!(!file.exists());
        assert!(kept.list().is_empty());
        assert!(!kept.forget(&path).expect("io"), "forgotten already");
    }

    #[test]
    fn an_expired_or_missing_kubeconfig_says_so_with_the_fix() {
        let kept = vec![
            Kept {
                cluster: "live".into(),
                saved: saved("/k/live", Some("2026-12-05T12:00:00Z")),
            },
            Kept {
                cluster: "old".into(),
                saved: saved("/k/old", Some("2026-12-05T09:00:00Z")),
            },
            Kept {
                cluster: "gone".into(),
                saved: saved("/k/gone", None),
            },
            Kept {
                cluster: "forever".into(),
                saved: saved("/k/forever", None),
            },
        ];
        let exists = |path: &Path| path != Path::new("/k/gone");
        let clusters = ["live", "old", "gone"].map(str::to_owned);
        let world = World {
            now: at("2026-12-05T10:00:00Z"),
            exists: &exists,
            clusters: Some(&clusters),
        };
        let shown = views(kept.clone(), &world);
        let problems: Vec<_> = shown.iter().map(|view| view.problem.as_deref()).collect();
        assert_eq!(problems[0], None);
        assert!(problems[1].is_some_and(|p| p.contains("expired")));
        assert!(problems[2].is_some_and(|p| p.contains("file is gone")));
        assert!(
            problems[3].is_some_and(|p| p.contains("no longer exists")),
            "forever's cluster is not at the gateway"
        );
        let unknown = World {
            clusters: None,
            ..world
        };
        assert_eq!(
            views(kept, &unknown)[3].problem,
            None,
            "without the gateway's list no cluster is called gone; no expiry never expires"
        );
    }
}
