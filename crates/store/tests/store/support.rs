//! What every test needs: a store in a fresh temporary directory, and objects to put in it.

use std::path::PathBuf;

use serde_json::json;
use swdesk_core::infra::InfraSpec;
use swdesk_core::record::{AtprotoRecordSpec, DeletionPolicy};
use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Kind, Metadata, Object, OwnerRef, Uid};
use swdesk_kernel::rkey::Rkey;
use swdesk_kernel::timestamp::Timestamp;
use swdesk_store::ObjectOf;
use tempfile::TempDir;

/// A store on a new file; the directory goes when the returned guard drops.
pub use swdesk_testkit::store_file as open;

/// The database file in `dir` (where [`open`] puts it).
pub fn db_path(dir: &TempDir) -> PathBuf {
    dir.path().join("objects.sqlite")
}

pub fn name(text: &str) -> Name {
    Name::parse(text).unwrap()
}

/// A uid of its own for each `n`.
pub fn uid(n: u8) -> Uid {
    Uid::from_bytes([n; 16])
}

pub fn at(millis: i64) -> Timestamp {
    Timestamp::from_unix_millis(millis).unwrap()
}

/// An Infra called `text` with uid `n`, never written.
pub fn infra(text: &str, n: u8) -> ObjectOf<InfraSpec> {
    Object {
        metadata: Metadata::new(name(text), uid(n), at(1_000)),
        spec: InfraSpec::default(),
        status: Default::default(),
    }
}

/// An AtprotoRecord called `text` with uid `n`, owned by `owners` (Infra objects).
pub fn record(text: &str, n: u8, owners: &[&Metadata]) -> ObjectOf<AtprotoRecordSpec> {
    let mut metadata = Metadata::new(name(text), uid(n), at(1_000));
    metadata.owner_refs = owners.iter().map(|owner| owned_by(owner)).collect();
    Object {
        metadata,
        spec: AtprotoRecordSpec {
            collection: "com.example.note".into(),
            rkey: Rkey::parse(text).unwrap(),
            value: json!({"$type": "com.example.note", "text": text}),
            deletion_policy: DeletionPolicy::Retain,
            swap: None,
        },
        status: Default::default(),
    }
}

/// A controlling reference to the Infra with `owner`.
pub fn owned_by(owner: &Metadata) -> OwnerRef {
    OwnerRef {
        kind: Kind::Infra,
        name: owner.name.clone(),
        uid: owner.uid.clone(),
        controller: true,
    }
}

/// `infra` with a description, so its spec differs from the default.
pub fn described(mut object: ObjectOf<InfraSpec>, text: &str) -> ObjectOf<InfraSpec> {
    object.spec.description = Some(text.into());
    object
}
