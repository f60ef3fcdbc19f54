//! Schema versions: a new file is made at the latest version, an older file is migrated with
//! its objects, a newer file is refused.

use rusqlite::Connection;
use swdesk_core::infra::InfraSpec;
use swdesk_store::schema::{MIGRATIONS, VERSION};
use swdesk_store::{Store, StoreError};

use crate::support::{db_path, name, uid};

fn user_version(conn: &Connection) -> u32 {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap()
}

#[test]
fn a_new_file_is_made_at_the_latest_version_with_a_write_ahead_log() {
    let dir = tempfile::tempdir().unwrap();
    Store::open(db_path(&dir)).unwrap();
    let conn = Connection::open(db_path(&dir)).unwrap();
    assert_eq!(user_version(&conn), VERSION);
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn a_file_at_version_one_is_migrated_and_its_objects_become_queryable_by_label_and_owner() {
    let dir = tempfile::tempdir().unwrap();
    let conn = Connection::open(db_path(&dir)).unwrap();
    conn.execute_batch(MIGRATIONS[0].sql).unwrap();
    conn.pragma_update(None, "user_version", 1).unwrap();
    conn.execute(
        "INSERT INTO objects (kind, name, uid, generation, resource_version, created_at, \
         labels, owner_refs, spec, status) VALUES ('Infra', 'web', ?1, 3, 7, 1000, ?2, ?3, \
         '{\"description\":\"old\"}', '{}')",
        [
            uid(1).as_str(),
            r#"{"tier":"front"}"#,
            &format!(r#"[{{"kind":"Infra","name":"top","uid":"{}"}}]"#, uid(9)),
        ],
    )
    .unwrap();
    drop(conn);

    let store = Store::open(db_path(&dir)).unwrap();
    let found = store.list_by_label::<InfraSpec>("tier", "front").unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].metadata.resource_version, 7);
    assert_eq!(found[0].spec.description.as_deref(), Some("old"));
    assert_eq!(store.list_owned_by::<InfraSpec>(&uid(9)).unwrap(), found);
    assert_eq!(
        store.get::<InfraSpec>(&name("web")).unwrap().as_ref(),
        found.first()
    );
    drop(store);
    assert_eq!(
        user_version(&Connection::open(db_path(&dir)).unwrap()),
        VERSION
    );
}

#[test]
fn a_file_from_a_newer_app_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let conn = Connection::open(db_path(&dir)).unwrap();
    conn.pragma_update(None, "user_version", VERSION + 1)
        .unwrap();
    drop(conn);
    let error = Store::open(db_path(&dir)).unwrap_err();
    assert!(
        matches!(error, StoreError::SchemaTooNew { found, supported } if found == VERSION + 1 && supported == VERSION),
        "{error}"
    );
    assert_eq!(
        user_version(&Connection::open(db_path(&dir)).unwrap()),
        VERSION + 1
    );
}
