//! Where the window may have a kubeconfig written or removed: a path the window sends is the
//! window's choice, and a window can be made to send anything (a script injected into it, a
//! pasted path). A kubeconfig is written only at an absolute path without `..` that is
//! under the owner's `~/.kube`, or exactly a path the owner picked in the system's own save
//! dialog (opened by the shell, never by the window: [`KubeconfigPaths::chosen`]). Every
//! other path is refused, saying where a kubeconfig may go. A kubeconfig is removed only at an
//! absolute path of one this installation saved.
//!
//! Invariant: the dialog's picks are kept in memory only, for this run.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// The places a kubeconfig may be written: `~/.kube`, and the paths the owner picked.
#[derive(Debug, Default)]
pub struct KubeconfigPaths {
    kube_dir: Option<PathBuf>,
    picked: Mutex<HashSet<PathBuf>>,
}

/// Why a path was refused (the owner's own path, so it is shown as it is).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{path} is not a place for a kubeconfig: {why}; save it under ~/.kube or pick the place with Choose…"
)]
pub struct PathRefused {
    /// The path asked for.
    pub path: String,
    /// Why it is refused.
    pub why: &'static str,
}

impl KubeconfigPaths {
    /// The places under `home` (its `.kube` folder); `None` when the home folder is not known.
    pub fn under_home(home: Option<PathBuf>) -> Self {
        Self {
            kube_dir: home.map(|home| home.join(".kube")),
            picked: Mutex::default(),
        }
    }

    /// Records a path the owner picked in the system's save dialog.
    pub fn chosen(&self, path: &Path) {
        if check_shape(path).is_ok() {
            self.lock().insert(path.to_path_buf());
        }
    }

    /// `path` when a kubeconfig may be written there.
    pub fn check(&self, path: &Path) -> Result<PathBuf, PathRefused> {
        let refused = |why| PathRefused {
            path: path.display().to_string(),
            why,
        };
        Self::check_removable(path)?;
        let under_kube = self
            .kube_dir
            .as_deref()
            .is_some_and(|dir| path.starts_with(dir) && path != dir);
        if under_kube || self.lock().contains(path) {
            return Ok(path.to_path_buf());
        }
        Err(refused(
            "it is outside ~/.kube and was not picked in the save dialog",
        ))
    }

    /// `Ok` when `path` may name a kubeconfig to remove: absolute, without `..` (which
    /// kubeconfigs may be removed at all is the kept list's rule: only those saved here, each
    /// at a path [`KubeconfigPaths::check`] allowed when it was saved).
    pub fn check_removable(path: &Path) -> Result<(), PathRefused> {
        check_shape(path).map_err(|why| PathRefused {
            path: path.display().to_string(),
            why,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<PathBuf>> {
        self.picked.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// An absolute path of a file, with no `..` on the way.
fn check_shape(path: &Path) -> Result<(), &'static str> {
    if !path.is_absolute() {
        return Err("it is not an absolute path");
    }
    if path.components().any(|part| part == Component::ParentDir) {
        return Err("it goes through ..");
    }
    if path.file_name().is_none() {
        return Err("it names no file");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> KubeconfigPaths {
        KubeconfigPaths::under_home(Some(PathBuf::from("/home/owner")))
    }

    #[test]
    fn under_kube_is_allowed_and_everything_else_is_refused_with_its_reason() {
        let paths = paths();
        assert!(paths.check(Path::new("/home/owner/.kube/dev.yaml")).is_ok());
        assert!(paths.check(Path::new("/home/owner/.kube/a/b.yaml")).is_ok());
        for (path, why) in [
            ("dev.yaml", "it is not an absolute path"),
            (".kube/dev.yaml", "it is not an absolute path"),
            ("/home/owner/.kube/../.bashrc", "it goes through .."),
            (
                "/home/owner/.kube",
                "it is outside ~/.kube and was not picked in the save dialog",
            ),
            (
                "/home/owner/.bashrc",
                "it is outside ~/.kube and was not picked in the save dialog",
            ),
            (
                "/etc/cron.d/x",
                "it is outside ~/.kube and was not picked in the save dialog",
            ),
        ] {
            let refused = paths.check(Path::new(path)).unwrap_err();
            assert_eq!(refused.why, why, "{path}");
            assert!(refused.to_string().contains(path), "{refused}");
        }
    }

    #[test]
    fn a_path_picked_in_the_dialog_is_allowed_exactly() {
        let paths = paths();
        let picked = Path::new("/srv/configs/prod.yaml");
        assert!(paths.check(picked).is_err());
        paths.chosen(picked);
        assert_eq!(paths.check(picked), Ok(picked.to_path_buf()));
        assert!(paths.check(Path::new("/srv/configs/other.yaml")).is_err());
        paths.chosen(Path::new("relative.yaml"));
        assert!(
            paths.check(Path::new("relative.yaml")).is_err(),
            "never a relative pick"
        );
    }

    #[test]
    fn without_a_home_only_picked_paths_are_allowed() {
        let paths = KubeconfigPaths::under_home(None);
        assert!(
            paths
                .check(Path::new("/home/owner/.kube/dev.yaml"))
                .is_err()
        );
    }
}
