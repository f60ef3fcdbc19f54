//! The database's shape and how a file gets there: the pragmas every connection sets, and the
//! ordered list of [`MIGRATIONS`], the file's version kept in `PRAGMA user_version`.
//!
//! Invariants: migration `n` (counted from 1) takes a file from version `n - 1` to `n`, runs
//! in one transaction together with the `user_version` bump (so a crash leaves the file at
//! `n - 1` or `n`, never between), and is never edited once released: a change of schema is a
//! new migration at the end. A file newer than [`VERSION`] is refused, never opened.
//!
//! Tables: `objects` holds one row per object, metadata in columns and spec, status,
//! finalizers, labels and owner references as JSON text; `labels` and `owner_refs` index the
//! last two for queries, kept in the same transaction as the row and removed with it
//! (`ON DELETE CASCADE`); `cursors` keeps, per followed event stream, where it resumes.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use crate::error::StoreError;

/// One step of the schema.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// The version the file has after this step.
    pub version: u32,
    /// What the step does, for people.
    pub summary: &'static str,
    /// The statements.
    pub sql: &'static str,
}

/// Every migration, oldest first.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        summary: "objects: one row per object, metadata in columns, the rest as JSON",
        sql: "
            CREATE TABLE objects (
                kind TEXT NOT NULL,
                name TEXT NOT NULL,
                uid TEXT NOT NULL UNIQUE,
                generation INTEGER NOT NULL,
                resource_version INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                deletion_requested_at INTEGER,
                finalizers TEXT NOT NULL DEFAULT '[]',
                labels TEXT NOT NULL DEFAULT '{}',
                owner_refs TEXT NOT NULL DEFAULT '[]',
                spec TEXT NOT NULL,
                status TEXT NOT NULL,
                PRIMARY KEY (kind, name)
            ) STRICT;
        ",
    },
    Migration {
        version: 2,
        summary: "labels and owner_refs: query indexes, filled from the existing objects",
        sql: "
            CREATE TABLE labels (
                uid TEXT NOT NULL REFERENCES objects (uid) ON DELETE CASCADE,
                key TEXT NOT NULL,
                value TEXT NOT NULL,
                PRIMARY KEY (uid, key)
            ) STRICT, WITHOUT ROWID;
            CREATE INDEX labels_by_pair ON labels (key, value);
            CREATE TABLE owner_refs (
                uid TEXT NOT NULL REFERENCES objects (uid) ON DELETE CASCADE,
                owner_uid TEXT NOT NULL,
                PRIMARY KEY (uid, owner_uid)
            ) STRICT, WITHOUT ROWID;
            CREATE INDEX owner_refs_by_owner ON owner_refs (owner_uid);
            INSERT INTO labels (uid, key, value)
                SELECT o.uid, l.key, l.value FROM objects o, json_each(o.labels) l;
            INSERT OR IGNORE INTO owner_refs (uid, owner_uid)
                SELECT o.uid, json_extract(r.value, '$.uid')
                FROM objects o, json_each(o.owner_refs) r;
        ",
    },
    Migration {
        version: 3,
        summary: "cursors: where each followed event stream resumes after a restart",
        sql: "
            CREATE TABLE cursors (
                stream TEXT PRIMARY KEY,
                seq INTEGER NOT NULL,
                rev TEXT
            ) STRICT;
        ",
    },
];

/// The version a file has once every migration ran.
pub const VERSION: u32 = MIGRATIONS.len() as u32;

/// How long a write waits for another process that holds the file (a second app instance).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Opens the database at `path` (created when missing): refuses a file newer than
/// [`VERSION`] before touching it, then sets the pragmas and migrates.
pub(crate) fn open(path: &Path) -> Result<Connection, StoreError> {
    let mut conn = Connection::open(path)?;
    refuse_newer(&conn)?;
    configure(&conn)?;
    migrate(&mut conn)?;
    Ok(conn)
}

/// Sets the pragmas every connection needs: the WAL journal, `synchronous=FULL` (a commit is
/// on disk before it returns), foreign keys, and a busy timeout.
pub(crate) fn configure(conn: &Connection) -> Result<(), StoreError> {
    let mode: String =
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::NoWriteAheadLog { mode });
    }
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    Ok(())
}

/// The file's schema version.
pub(crate) fn user_version(conn: &Connection) -> Result<u32, StoreError> {
    Ok(conn.pragma_query_value(None, "user_version", |row| row.get(0))?)
}

/// The file's version, unless it is newer than this build knows.
fn refuse_newer(conn: &Connection) -> Result<u32, StoreError> {
    let found = user_version(conn)?;
    if found > VERSION {
        return Err(StoreError::SchemaTooNew {
            found,
            supported: VERSION,
        });
    }
    Ok(found)
}

/// Runs every migration the file has not had yet, each in its own transaction; answers the
/// version reached.
pub(crate) fn migrate(conn: &mut Connection) -> Result<u32, StoreError> {
    let found = refuse_newer(conn)?;
    for migration in MIGRATIONS.iter().filter(|m| m.version > found) {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute_batch(migration.sql)?;
        tx.pragma_update(None, "user_version", migration.version)?;
        tx.commit()?;
    }
    Ok(VERSION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_one_by_one_from_one() {
        for (index, migration) in MIGRATIONS.iter().enumerate() {
            assert_eq!(
                migration.version as usize,
                index + 1,
                "{}",
                migration.summary
            );
        }
    }

    #[test]
    fn a_configured_connection_journals_ahead_and_syncs_fully_with_foreign_keys() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join("objects.db")).unwrap();
        configure(&conn).unwrap();
        let read = |pragma: &str| -> String {
            conn.pragma_query_value(None, pragma, |row| row.get::<_, rusqlite::types::Value>(0))
                .map(|value| format!("{value:?}"))
                .unwrap()
        };
        assert_eq!(read("journal_mode"), "Text(\"wal\")");
        assert_eq!(read("synchronous"), "Integer(2)");
        assert_eq!(read("foreign_keys"), "Integer(1)");
    }

    #[test]
    fn migrating_twice_changes_nothing_the_second_time() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("objects.db")).unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), VERSION);
        assert_eq!(migrate(&mut conn).unwrap(), VERSION);
        assert_eq!(user_version(&conn).unwrap(), VERSION);
    }
}
