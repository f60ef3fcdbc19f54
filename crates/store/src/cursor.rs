//! Where each followed event stream resumes (the owner's `subscribeRepos`): one row per
//! stream, its last sequence number and the repo revision applied with it, written in the same
//! kind of transaction as every object, so a kept cursor is on disk before the call returns.

use rusqlite::{Connection, OptionalExtension as _, params};
use swdesk_kernel::repo::live::FeedCursor;

use crate::error::StoreError;

/// The cursor kept for `stream`, if any.
pub(crate) fn find(conn: &Connection, stream: &str) -> Result<Option<FeedCursor>, StoreError> {
    let row = conn
        .query_row(
            "SELECT seq, rev FROM cursors WHERE stream = ?1",
            params![stream],
            |row| {
                Ok(FeedCursor {
                    seq: row.get(0)?,
                    rev: row.get(1)?,
                })
            },
        )
        .optional()?;
    Ok(row)
}

/// Keeps `at` for `stream`, replacing what was there.
pub(crate) fn keep(conn: &Connection, stream: &str, at: &FeedCursor) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO cursors (stream, seq, rev) VALUES (?1, ?2, ?3) \
         ON CONFLICT (stream) DO UPDATE SET seq = excluded.seq, rev = excluded.rev",
        params![stream, at.seq, at.rev],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::Store;

    use super::*;

    #[test]
    fn a_kept_cursor_is_read_back_after_reopening_and_replaced_by_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("objects.db");
        let store = Store::open(&path).unwrap();
        assert_eq!(store.cursor("owner").unwrap(), None);
        let first = FeedCursor {
            seq: 7,
            rev: Some("3kabc".into()),
        };
        store.keep_cursor("owner", &first).unwrap();
        drop(store);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.cursor("owner").unwrap(), Some(first));
        let next = FeedCursor { seq: 9, rev: None };
        store.keep_cursor("owner", &next).unwrap();
        assert_eq!(store.cursor("owner").unwrap(), Some(next));
        assert_eq!(store.cursor("another").unwrap(), None);
    }
}
