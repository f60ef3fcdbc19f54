//! One object as a database row, untyped: [`Raw`] holds the metadata and the spec and status as
//! JSON values, and the functions here read and write rows of `objects` together with their
//! `labels` and `owner_refs` index rows. JSON is parsed and printed here and nowhere else.
//!
//! Invariants: a row and its index rows are written by the same call (callers run it inside
//! their transaction); a row that does not parse back is reported as
//! [`StoreError::Corrupt`], never skipped; times are stored as Unix milliseconds.

use rusqlite::{Connection, Params, Row, params};
use serde::Serialize;
use serde_json::Value;
use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Kind, Metadata, Uid};
use swdesk_kernel::timestamp::Timestamp;

use crate::error::StoreError;
use crate::resource::{kind_from_text, kind_text};

/// An object with its spec and status as JSON.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Raw {
    pub kind: Kind,
    pub metadata: Metadata,
    pub spec: Value,
    pub status: Value,
}

const SELECT: &str = "SELECT o.kind, o.name, o.uid, o.generation, o.resource_version, \
    o.created_at, o.deletion_requested_at, o.finalizers, o.labels, o.owner_refs, o.spec, \
    o.status FROM objects o";

/// The columns of one row, as SQLite hands them over.
struct Columns {
    kind: String,
    name: String,
    uid: String,
    generation: i64,
    resource_version: i64,
    created_at: i64,
    deletion_requested_at: Option<i64>,
    finalizers: String,
    labels: String,
    owner_refs: String,
    spec: String,
    status: String,
}

impl Columns {
    fn read(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            kind: row.get(0)?,
            name: row.get(1)?,
            uid: row.get(2)?,
            generation: row.get(3)?,
            resource_version: row.get(4)?,
            created_at: row.get(5)?,
            deletion_requested_at: row.get(6)?,
            finalizers: row.get(7)?,
            labels: row.get(8)?,
            owner_refs: row.get(9)?,
            spec: row.get(10)?,
            status: row.get(11)?,
        })
    }

    fn decode(self) -> Result<Raw, StoreError> {
        let metadata = Metadata {
            name: Name::parse(&self.name).map_err(|e| self.corrupt("name", e))?,
            uid: Uid::parse(&self.uid).map_err(|e| self.corrupt("uid", e))?,
            generation: self.count("generation", self.generation)?,
            resource_version: self.count("resource_version", self.resource_version)?,
            created_at: self.time("created_at", self.created_at)?,
            deletion_requested_at: match self.deletion_requested_at {
                Some(millis) => Some(self.time("deletion_requested_at", millis)?),
                None => None,
            },
            finalizers: self.json("finalizers", &self.finalizers)?,
            labels: self.json("labels", &self.labels)?,
            owner_refs: self.json("owner_refs", &self.owner_refs)?,
        };
        Ok(Raw {
            kind: kind_from_text(&self.kind)
                .ok_or_else(|| self.corrupt("kind", "not a kind this app knows"))?,
            metadata,
            spec: self.json("spec", &self.spec)?,
            status: self.json("status", &self.status)?,
        })
    }

    fn count(&self, field: &'static str, value: i64) -> Result<u64, StoreError> {
        u64::try_from(value).map_err(|_| self.corrupt(field, format!("{value} is negative")))
    }

    fn time(&self, field: &'static str, millis: i64) -> Result<Timestamp, StoreError> {
        Timestamp::from_unix_millis(millis).map_err(|e| self.corrupt(field, e))
    }

    fn json<T: serde::de::DeserializeOwned>(
        &self,
        field: &'static str,
        text: &str,
    ) -> Result<T, StoreError> {
        serde_json::from_str(text).map_err(|e| self.corrupt(field, e))
    }

    fn corrupt(&self, field: &'static str, detail: impl ToString) -> StoreError {
        StoreError::Corrupt {
            kind: self.kind.clone(),
            name: self.name.clone(),
            field,
            detail: detail.to_string(),
        }
    }
}

/// The rows `SELECT ... FROM objects o {tail}` finds.
pub(crate) fn select(
    conn: &Connection,
    tail: &str,
    params: impl Params,
) -> Result<Vec<Raw>, StoreError> {
    let mut statement = conn.prepare_cached(&format!("{SELECT} {tail}"))?;
    let rows = statement
        .query_map(params, Columns::read)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    rows.into_iter().map(Columns::decode).collect()
}

/// The object of `kind` called `name`.
pub(crate) fn find(conn: &Connection, kind: Kind, name: &Name) -> Result<Option<Raw>, StoreError> {
    let tail = "WHERE o.kind = ?1 AND o.name = ?2";
    let found = select(conn, tail, params![kind_text(kind), name.as_str()])?;
    Ok(found.into_iter().next())
}

/// Whether some object has `uid`.
pub(crate) fn uid_exists(conn: &Connection, uid: &Uid) -> Result<bool, StoreError> {
    let mut statement = conn.prepare_cached("SELECT 1 FROM objects WHERE uid = ?1")?;
    Ok(statement.exists([uid.as_str()])?)
}

/// Every object, of any kind, whose owner references name `owner`.
pub(crate) fn owned_by(conn: &Connection, owner: &Uid) -> Result<Vec<Raw>, StoreError> {
    let tail = "JOIN owner_refs r ON r.uid = o.uid WHERE r.owner_uid = ?1 ORDER BY o.kind, o.name";
    select(conn, tail, [owner.as_str()])
}

/// Writes a new row and its index rows.
pub(crate) fn insert(conn: &Connection, raw: &Raw) -> Result<(), StoreError> {
    let json = Json::of(raw)?;
    let meta = &raw.metadata;
    conn.prepare_cached(
        "INSERT INTO objects (kind, name, uid, generation, resource_version, created_at, \
         deletion_requested_at, finalizers, labels, owner_refs, spec, status) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
        kind_text(raw.kind),
        meta.name.as_str(),
        meta.uid.as_str(),
        int(meta.generation),
        int(meta.resource_version),
        meta.created_at.unix_millis(),
        meta.deletion_requested_at.map(Timestamp::unix_millis),
        json.finalizers,
        json.labels,
        json.owner_refs,
        json.spec,
        json.status,
    ])?;
    index(conn, raw)
}

/// Rewrites the row of `raw`'s uid (everything but kind, name, uid and creation time) and its
/// index rows.
pub(crate) fn update(conn: &Connection, raw: &Raw) -> Result<(), StoreError> {
    let json = Json::of(raw)?;
    let meta = &raw.metadata;
    conn.prepare_cached(
        "UPDATE objects SET generation = ?2, resource_version = ?3, \
         deletion_requested_at = ?4, finalizers = ?5, labels = ?6, owner_refs = ?7, \
         spec = ?8, status = ?9 WHERE uid = ?1",
    )?
    .execute(params![
        meta.uid.as_str(),
        int(meta.generation),
        int(meta.resource_version),
        meta.deletion_requested_at.map(Timestamp::unix_millis),
        json.finalizers,
        json.labels,
        json.owner_refs,
        json.spec,
        json.status,
    ])?;
    index(conn, raw)
}

/// Removes the row of `uid`; its index rows go with it (foreign keys cascade).
pub(crate) fn remove(conn: &Connection, uid: &Uid) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM objects WHERE uid = ?1")?
        .execute([uid.as_str()])?;
    Ok(())
}

/// Replaces the label and owner index rows of `raw`.
fn index(conn: &Connection, raw: &Raw) -> Result<(), StoreError> {
    let uid = raw.metadata.uid.as_str();
    conn.prepare_cached("DELETE FROM labels WHERE uid = ?1")?
        .execute([uid])?;
    conn.prepare_cached("DELETE FROM owner_refs WHERE uid = ?1")?
        .execute([uid])?;
    let mut label =
        conn.prepare_cached("INSERT INTO labels (uid, key, value) VALUES (?1, ?2, ?3)")?;
    for (key, value) in &raw.metadata.labels {
        label.execute([uid, key, value])?;
    }
    let mut owner =
        conn.prepare_cached("INSERT OR IGNORE INTO owner_refs (uid, owner_uid) VALUES (?1, ?2)")?;
    for reference in &raw.metadata.owner_refs {
        owner.execute([uid, reference.uid.as_str()])?;
    }
    Ok(())
}

/// The JSON columns of a row.
struct Json {
    finalizers: String,
    labels: String,
    owner_refs: String,
    spec: String,
    status: String,
}

impl Json {
    fn of(raw: &Raw) -> Result<Self, StoreError> {
        Ok(Self {
            finalizers: encode(raw, "finalizers", &raw.metadata.finalizers)?,
            labels: encode(raw, "labels", &raw.metadata.labels)?,
            owner_refs: encode(raw, "ownerRefs", &raw.metadata.owner_refs)?,
            spec: encode(raw, "spec", &raw.spec)?,
            status: encode(raw, "status", &raw.status)?,
        })
    }
}

fn encode<T: Serialize>(raw: &Raw, field: &'static str, value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|source| StoreError::Encode {
        kind: raw.kind,
        name: raw.metadata.name.clone(),
        field,
        source,
    })
}

/// A version or generation as SQLite stores it. Both start at 1 and grow by one per write,
/// so `i64::MAX` is out of reach; it saturates rather than wrap.
fn int(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}
