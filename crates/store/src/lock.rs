//! [`StoreLock`]: one controller per store file. The controller holds an OS file lock on
//! `<store>.lock` for its whole life (`flock` on Linux and macOS, `LockFileEx` on Windows,
//! through `std::fs::File::try_lock`), with its process id written inside, so a second app
//! process on the same data directory (one that slipped past the single-instance guard, or an
//! older build) cannot run a second controller on the same objects and the same single-use
//! refresh token; it is told which process holds the store.
//!
//! Invariants: the lock is released when the holder drops it or its process ends, however it
//! ends (the OS drops the lock with the file), so a crash never leaves a stale lock; the
//! file's content is only a hint for the message, never the lock itself.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

/// Why the store could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process (or another controller of this one) holds the store.
    #[error("{} is in use by another swdesk{}; close it first", path.display(), holder.map(|pid| format!(" (process {pid})")).unwrap_or_default())]
    Held {
        /// The store file.
        path: PathBuf,
        /// The process id the holder wrote, when it could be read.
        holder: Option<u32>,
    },
    /// The lock file could not be opened or locked.
    #[error("{} could not be locked: {source}", path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The exclusive lock on one store file, held until dropped.
#[derive(Debug)]
pub struct StoreLock {
    _file: File,
    path: PathBuf,
}

impl StoreLock {
    /// Locks the store at `store` (its `<store>.lock` file), or says who holds it.
    pub fn acquire(store: &Path) -> Result<Self, LockError> {
        let path = lock_path(store);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(LockError::Held {
                    path: store.to_owned(),
                    holder: holder_of(&mut file),
                });
            }
            Err(TryLockError::Error(source)) => return Err(io(source)),
        }
        file.set_len(0).map_err(io)?;
        write!(file, "{}", std::process::id()).map_err(io)?;
        file.sync_data().map_err(io)?;
        Ok(Self { _file: file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// `<store>.lock`, beside the store file.
fn lock_path(store: &Path) -> PathBuf {
    let mut name = store.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// The process id the holder wrote, if it reads as one.
fn holder_of(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_a_store_is_refused_naming_the_holder_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("objects.sqlite");
        let first = StoreLock::acquire(&store).unwrap();
        assert_eq!(first.path(), dir.path().join("objects.sqlite.lock"));
        match StoreLock::acquire(&store) {
            Err(LockError::Held { path, holder }) => {
                assert_eq!(path, store);
                assert_eq!(holder, Some(std::process::id()));
            }
            other => panic!("expected the store to be held, got {other:?}"),
        }
        let refused = StoreLock::acquire(&store).unwrap_err().to_string();
        assert!(
            refused.contains(&format!("process {}", std::process::id())),
            "{refused}"
        );
        drop(first);
        let again = StoreLock::acquire(&store);
        assert!(again.is_ok(), "a dropped lock is free again: {again:?}");
    }
}
