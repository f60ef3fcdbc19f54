//! Small JSON files kept beside an account's store (the kubeconfigs saved, the clusters last
//! seen): read back as a value or as nothing when missing or unreadable, written whole, mode
//! 0600, their directory made first.

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// The value in `file`, or `None` when it is missing or does not read as a `T`.
pub fn read<T: DeserializeOwned>(file: &Path) -> Option<T> {
    let bytes = std::fs::read(file).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Writes `value` to `file` whole, readable by the owner only.
pub fn write<T: Serialize + ?Sized>(file: &Path, value: &T) -> std::io::Result<()> {
    if let Some(directory) = file.parent() {
        std::fs::create_dir_all(directory)?;
    }
    let bytes = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    swdesk_files::write_private(file, &bytes)
}
