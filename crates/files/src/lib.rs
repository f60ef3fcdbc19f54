//! Files only their owner reads: [`write_private`] writes bytes at a path with mode 0600 (on
//! Unix), whole or not at all: into a temporary file of an unpredictable name in the target
//! folder (created exclusively, readable by the owner only), synced, then renamed over the
//! path, and the folder synced, so the path holds the old file or the whole new one, never a
//! part. Kubeconfigs (they hold a client key) and the JSON kept beside an account's store go
//! through it.

use std::io::Write as _;
use std::path::Path;

/// Writes `bytes` at `path` as a file only its owner reads (0600 on Unix), whole or not at
/// all: a temporary file of an unpredictable name in the same folder, synced, renamed over
/// `path`, the folder synced.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let directory = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if path.file_name().is_none() {
        return Err(std::io::Error::other("the path names no file"));
    }
    // `tempfile` creates the file with a random name, exclusively, readable by the owner only.
    let mut file = tempfile::Builder::new()
        .prefix(".swdesk-")
        .tempfile_in(directory)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|error| error.error)?;
    #[cfg(unix)]
    std::fs::File::open(directory)?.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_file_is_replaced_whole_readable_by_its_owner_only_with_no_temporary_left() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("config");
        std::fs::write(&path, "older").unwrap();
        write_private(&path, b"newer").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "newer");
        let names: Vec<_> = std::fs::read_dir(directory.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["config"], "no temporary file left");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn a_path_that_names_no_file_is_refused() {
        assert!(write_private(Path::new("/"), b"x").is_err());
    }
}
