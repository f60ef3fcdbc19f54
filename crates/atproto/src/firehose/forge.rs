//! `subscribeRepos` frames made by hand, for tests only (unit tests here, and the hostile
//! server of the integration tests): a commit of any repo signed by any key, with a one-node
//! tree holding its records, in the framing a PDS sends. Never in the product.

use std::collections::BTreeMap;

use cid::Cid;
use ipld_core::ipld::Ipld;
use serde_json::Value;

use crate::attestation::AttestationKey;

/// A commit to forge.
#[derive(Debug, Clone)]
pub struct Forged<'a> {
    /// Its sequence number.
    pub seq: i64,
    /// The repo it claims.
    pub did: &'a str,
    /// Its revision.
    pub rev: &'a str,
    /// The revision before it.
    pub since: Option<&'a str>,
    /// `collection/rkey` and the record there (none: deleted).
    pub ops: Vec<(String, Option<Value>)>,
}

/// The frame of `commit`, signed by `key`.
pub fn commit_frame(commit: &Forged<'_>, key: &AttestationKey) -> Vec<u8> {
    let mut blocks: Vec<(Cid, Vec<u8>)> = Vec::new();
    let mut entries = Vec::new();
    let mut ops = Vec::new();
    let mut sorted = commit.ops.clone();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, value) in &sorted {
        let cid = value.as_ref().map(|value| {
            let bytes = swdesk_lexicon::cid::dag_cbor_bytes(value).expect("a record encodes");
            let cid = swdesk_lexicon::cid::cid_of_dag_cbor(&bytes);
            blocks.push((cid, bytes));
            cid
        });
        if let Some(cid) = cid {
            entries.push(map([
                ("p", Ipld::Integer(0)),
                ("k", Ipld::Bytes(path.as_bytes().to_vec())),
                ("v", Ipld::Link(cid)),
                ("t", Ipld::Null),
            ]));
        }
        let action = if cid.is_some() { "create" } else { "delete" };
        ops.push(map([
            ("action", Ipld::String(action.to_owned())),
            ("path", Ipld::String(path.clone())),
            ("cid", cid.map_or(Ipld::Null, Ipld::Link)),
        ]));
    }
    let node = map([("l", Ipld::Null), ("e", Ipld::List(entries))]);
    let data = block(&mut blocks, &node);
    let mut fields = BTreeMap::from([
        ("did".to_owned(), Ipld::String(commit.did.to_owned())),
        ("version".to_owned(), Ipld::Integer(3)),
        ("data".to_owned(), Ipld::Link(data)),
        ("rev".to_owned(), Ipld::String(commit.rev.to_owned())),
        ("prev".to_owned(), Ipld::Null),
    ]);
    let unsigned = swdesk_lexicon::cid::ipld_dag_cbor_bytes(&Ipld::Map(fields.clone()))
        .expect("a commit encodes");
    fields.insert("sig".to_owned(), Ipld::Bytes(key.sign(&unsigned)));
    let root = block(&mut blocks, &Ipld::Map(fields));
    let body = map([
        ("seq", Ipld::Integer(commit.seq.into())),
        ("rebase", Ipld::Bool(false)),
        ("tooBig", Ipld::Bool(false)),
        ("repo", Ipld::String(commit.did.to_owned())),
        ("commit", Ipld::Link(root)),
        ("rev", Ipld::String(commit.rev.to_owned())),
        (
            "since",
            commit
                .since
                .map_or(Ipld::Null, |since| Ipld::String(since.to_owned())),
        ),
        ("blocks", Ipld::Bytes(car(root, &blocks))),
        ("ops", Ipld::List(ops)),
        ("blobs", Ipld::List(Vec::new())),
        ("time", Ipld::String("2026-12-06T00:00:00.000Z".to_owned())),
    ]);
    frame("#commit", &body)
}

/// A frame of type `kind` (`op: 1`) carrying `body`.
pub fn frame(kind: &str, body: &Ipld) -> Vec<u8> {
    let header = map([
        ("op", Ipld::Integer(1)),
        ("t", Ipld::String(kind.to_owned())),
    ]);
    let mut bytes = serde_ipld_dagcbor::to_vec(&header).expect("a header encodes");
    bytes.extend(serde_ipld_dagcbor::to_vec(body).expect("a body encodes"));
    bytes
}

/// A map of `fields`.
pub fn map<const N: usize>(fields: [(&str, Ipld); N]) -> Ipld {
    Ipld::Map(
        fields
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect(),
    )
}

fn block(blocks: &mut Vec<(Cid, Vec<u8>)>, value: &Ipld) -> Cid {
    let bytes = swdesk_lexicon::cid::ipld_dag_cbor_bytes(value).expect("a block encodes");
    let cid = swdesk_lexicon::cid::cid_of_dag_cbor(&bytes);
    blocks.push((cid, bytes));
    cid
}

/// A CARv1 of `blocks` under `root`.
fn car(root: Cid, blocks: &[(Cid, Vec<u8>)]) -> Vec<u8> {
    let header = map([
        ("version", Ipld::Integer(1)),
        ("roots", Ipld::List(vec![Ipld::Link(root)])),
    ]);
    let header = serde_ipld_dagcbor::to_vec(&header).expect("a CAR header encodes");
    let mut out = Vec::new();
    varint(&mut out, header.len());
    out.extend(header);
    for (cid, data) in blocks {
        let cid = cid.to_bytes();
        varint(&mut out, cid.len() + data.len());
        out.extend(cid);
        out.extend(data);
    }
    out
}

fn varint(out: &mut Vec<u8>, mut value: usize) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}
