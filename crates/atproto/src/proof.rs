//! Proofs of records in another repo: the CAR file `com.atproto.sync.getRecord` answers (a
//! signed commit, the Merkle Search Tree nodes on the path to the record, and the record's
//! block), checked here without trusting a word of it:
//! - every block's bytes hash to the CID it comes under (sha2-256; DAG-CBOR or raw);
//! - the root is a version-3 commit of the repo's DID, signed by the repo's signing key (the
//!   DID document's `#atproto` key) over its DAG-CBOR form without `sig`;
//! - the tree under the commit's `data` holds `collection/rkey` at a CID whose block is in
//!   the CAR, or proves there is none (the path ends before the key);
//! - the record's JSON value is read from exactly those bytes, so its CID is the one the
//!   bytes have, whatever a re-encoding of the JSON would give.
//!
//! Bounded: at most [`MAX_BLOCKS`] blocks and [`MAX_DEPTH`] tree levels; the CAR's size is
//! capped by the caller's read. Every refusal says which check failed and names the CIDs.

use std::collections::HashMap;

use cid::Cid;
use ipld_core::ipld::Ipld;
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::did_key::PublicKey;

/// The most blocks a record proof may hold.
pub const MAX_BLOCKS: usize = 512;
/// The deepest tree a proof may walk.
pub const MAX_DEPTH: usize = 64;

const DAG_CBOR: u64 = 0x71;
const RAW: u64 = 0x55;
const SHA2_256: u64 = 0x12;

/// A record as its proof shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProvenValue {
    /// The record's CID: the hash of its bytes.
    pub cid: Cid,
    /// Its value in the JSON data model, read from those bytes.
    pub value: Value,
    /// The revision of the signed commit that holds it.
    pub rev: String,
}

/// Why a proof does not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    /// The CAR is not one.
    #[error("the proof is not a readable CAR file: {0}")]
    Car(String),
    /// A block's bytes do not hash to its CID.
    #[error("a block of the proof claims {claimed} but its bytes are {computed}")]
    BlockMismatch {
        /// The CID the block came under.
        claimed: String,
        /// The CID of its bytes.
        computed: String,
    },
    /// A block the proof needs is not in it.
    #[error("the proof lacks the block {0}")]
    Missing(String),
    /// The root is not a commit of this repo.
    #[error("the proof's commit is not one of {did}: {why}")]
    Commit {
        /// The repo asked for.
        did: String,
        /// What is wrong with it.
        why: String,
    },
    /// The commit's signature does not verify with the repo's key.
    #[error("the commit of {0} is not signed by its key")]
    Signature(String),
    /// A tree node is malformed, or the walk went too deep.
    #[error("the proof's tree is malformed: {0}")]
    Tree(String),
    /// The record's bytes are not a data-model value.
    #[error("the proven record does not read: {0}")]
    Record(String),
}

/// Checks `car` as the proof of `collection/rkey` in `did`'s repo, whose signing key is
/// `key`: the record as proven, or `None` when the proof shows there is none.
pub fn verify_record(
    car: &[u8],
    did: &str,
    key: &PublicKey,
    collection: &str,
    rkey: &str,
) -> Result<Option<ProvenValue>, ProofError> {
    let (root, blocks) = read_car(car, MAX_BLOCKS)?;
    let commit = decode(&blocks, &root)?;
    let (data, rev) = check_commit(&commit, did, key)?;
    let path = format!("{collection}/{rkey}");
    let Some(cid) = find(&blocks, data, path.as_bytes())? else {
        return Ok(None);
    };
    let record = decode(&blocks, &cid)?;
    let value = swdesk_lexicon::data_model::from_ipld(&record)
        .map_err(|error| ProofError::Record(error.to_string()))?;
    Ok(Some(ProvenValue { cid, value, rev }))
}

/// The CAR's single root and its blocks (at most `max_blocks`), each checked against its CID.
pub(crate) fn read_car(
    car: &[u8],
    max_blocks: usize,
) -> Result<(Cid, HashMap<Cid, Vec<u8>>), ProofError> {
    let mut rest = car;
    let header = take_frame(&mut rest)?;
    let header: Ipld = serde_ipld_dagcbor::from_slice(header)
        .map_err(|error| ProofError::Car(format!("header: {error}")))?;
    let root = match (header.get("version"), header.get("roots")) {
        (Ok(Some(Ipld::Integer(1))), Ok(Some(Ipld::List(roots)))) => match roots.as_slice() {
            [Ipld::Link(root)] => *root,
            _ => return Err(ProofError::Car("a proof has exactly one root".to_owned())),
        },
        _ => {
            return Err(ProofError::Car(
                "the header is not a CARv1 header".to_owned(),
            ));
        }
    };
    let mut blocks = HashMap::new();
    while !rest.is_empty() {
        if blocks.len() == max_blocks {
            return Err(ProofError::Car(format!("more than {max_blocks} blocks")));
        }
        let (cid, data) = read_block(take_frame(&mut rest)?)?;
        blocks.insert(cid, data.to_vec());
    }
    Ok((root, blocks))
}

/// One varint-length-prefixed section.
fn take_frame<'a>(rest: &mut &'a [u8]) -> Result<&'a [u8], ProofError> {
    let (length, after) = varint(rest)?;
    if length > after.len() {
        return Err(ProofError::Car("a section runs past the end".to_owned()));
    }
    let (frame, tail) = after.split_at(length);
    *rest = tail;
    Ok(frame)
}

/// An unsigned LEB128 varint (at most 9 bytes, as multiformats allows) and what follows it.
fn varint(bytes: &[u8]) -> Result<(usize, &[u8]), ProofError> {
    let mut value: u64 = 0;
    for (index, byte) in bytes.iter().take(9).enumerate() {
        value |= u64::from(byte & 0x7f) << (7 * index);
        if byte & 0x80 == 0 {
            let length = usize::try_from(value)
                .map_err(|_| ProofError::Car("a section length overflows".to_owned()))?;
            return Ok((length, bytes.get(index + 1..).unwrap_or_default()));
        }
    }
    Err(ProofError::Car(
        "a section length is not a varint".to_owned(),
    ))
}

/// A block's CID and bytes, the bytes checked against the CID.
fn read_block(frame: &[u8]) -> Result<(Cid, &[u8]), ProofError> {
    let mut reader = std::io::Cursor::new(frame);
    let cid = Cid::read_bytes(&mut reader)
        .map_err(|error| ProofError::Car(format!("a block's CID: {error}")))?;
    let start = usize::try_from(reader.position()).unwrap_or(usize::MAX);
    let data = frame
        .get(start..)
        .ok_or_else(|| ProofError::Car("a block ends in its CID".to_owned()))?;
    let hashed = cid.version() == cid::Version::V1
        && matches!(cid.codec(), DAG_CBOR | RAW)
        && cid.hash().code() == SHA2_256;
    if !hashed || cid.hash().digest() != Sha256::digest(data).as_slice() {
        let computed = swdesk_lexicon::cid::cid_of_dag_cbor(data);
        return Err(ProofError::BlockMismatch {
            claimed: cid.to_string(),
            computed: computed.to_string(),
        });
    }
    Ok((cid, data))
}

pub(crate) fn decode(blocks: &HashMap<Cid, Vec<u8>>, cid: &Cid) -> Result<Ipld, ProofError> {
    let bytes = blocks
        .get(cid)
        .ok_or_else(|| ProofError::Missing(cid.to_string()))?;
    serde_ipld_dagcbor::from_slice(bytes)
        .map_err(|error| ProofError::Tree(format!("the block {cid} does not decode: {error}")))
}

/// The commit's tree root and revision, once it is `did`'s and signed by `key`.
pub(crate) fn check_commit(
    commit: &Ipld,
    did: &str,
    key: &PublicKey,
) -> Result<(Cid, String), ProofError> {
    let refused = |why: &str| ProofError::Commit {
        did: did.to_owned(),
        why: why.to_owned(),
    };
    let Ipld::Map(fields) = commit else {
        return Err(refused("it is not a map"));
    };
    if fields.get("did") != Some(&Ipld::String(did.to_owned())) {
        return Err(refused("it names another repo"));
    }
    if fields.get("version") != Some(&Ipld::Integer(3)) {
        return Err(refused("it is not a version 3 commit"));
    }
    let (Some(Ipld::Link(data)), Some(Ipld::String(rev)), Some(Ipld::Bytes(sig))) =
        (fields.get("data"), fields.get("rev"), fields.get("sig"))
    else {
        return Err(refused("it lacks data, rev or sig"));
    };
    let mut unsigned = fields.clone();
    unsigned.remove("sig");
    let bytes = swdesk_lexicon::cid::ipld_dag_cbor_bytes(&Ipld::Map(unsigned))
        .map_err(|error| refused(&error.to_string()))?;
    if !key.verifies(&bytes, sig) {
        return Err(ProofError::Signature(did.to_owned()));
    }
    Ok((*data, rev.clone()))
}

/// The CID the tree under `root` holds at `key`, or `None` when the path shows none.
pub(crate) fn find(
    blocks: &HashMap<Cid, Vec<u8>>,
    root: Cid,
    key: &[u8],
) -> Result<Option<Cid>, ProofError> {
    let mut node = root;
    for _ in 0..MAX_DEPTH {
        match step(&decode(blocks, &node)?, key)? {
            Step::Found(cid) => return Ok(Some(cid)),
            Step::Descend(Some(below)) => node = below,
            Step::Descend(None) => return Ok(None),
        }
    }
    Err(ProofError::Tree(format!("deeper than {MAX_DEPTH} levels")))
}

enum Step {
    Found(Cid),
    Descend(Option<Cid>),
}

/// Where `key` is in one node: its value, or the subtree to look in (none: not there).
fn step(node: &Ipld, key: &[u8]) -> Result<Step, ProofError> {
    let malformed = |why: &str| ProofError::Tree(why.to_owned());
    let subtree = |field: Option<&Ipld>| match field {
        Some(Ipld::Link(cid)) => Ok(Some(*cid)),
        Some(Ipld::Null) | None => Ok(None),
        Some(_) => Err(malformed("a subtree is not a link")),
    };
    let (Ok(left), Ok(Some(Ipld::List(entries)))) = (node.get("l"), node.get("e")) else {
        return Err(malformed("a node lacks its entries"));
    };
    let mut below = subtree(left)?;
    let mut previous: Vec<u8> = Vec::new();
    for entry in entries {
        let (Ok(Some(Ipld::Integer(prefix))), Ok(Some(Ipld::Bytes(suffix))), Ok(Some(value))) =
            (entry.get("p"), entry.get("k"), entry.get("v"))
        else {
            return Err(malformed("an entry lacks p, k or v"));
        };
        let shared = usize::try_from(*prefix)
            .ok()
            .and_then(|shared| previous.get(..shared))
            .ok_or_else(|| malformed("an entry's prefix is longer than the key before it"))?;
        let full = [shared, suffix.as_slice()].concat();
        if full <= previous && !previous.is_empty() {
            return Err(malformed("the entries are not in order"));
        }
        match key.cmp(full.as_slice()) {
            std::cmp::Ordering::Less => return Ok(Step::Descend(below)),
            std::cmp::Ordering::Equal => match value {
                Ipld::Link(cid) => return Ok(Step::Found(*cid)),
                _ => return Err(malformed("an entry's value is not a link")),
            },
            std::cmp::Ordering::Greater => {
                below = subtree(entry.get("t").ok().flatten())?;
                previous = full;
            }
        }
    }
    Ok(Step::Descend(below))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CARv1 of `count` distinct raw blocks, its root the first of them.
    fn car_of(count: usize) -> Vec<u8> {
        let blocks: Vec<(Cid, Vec<u8>)> = (0..count)
            .map(|n| {
                let data = n.to_be_bytes().to_vec();
                let hash = cid::multihash::Multihash::<64>::wrap(SHA2_256, &Sha256::digest(&data))
                    .expect("a sha2-256 digest fits");
                (Cid::new_v1(RAW, hash), data)
            })
            .collect();
        let header = Ipld::Map(
            [
                ("version".to_owned(), Ipld::Integer(1)),
                (
                    "roots".to_owned(),
                    Ipld::List(vec![Ipld::Link(blocks[0].0)]),
                ),
            ]
            .into(),
        );
        let mut car = Vec::new();
        let mut section = |bytes: Vec<u8>| {
            let mut length = bytes.len();
            while length >= 0x80 {
                car.push((length as u8 & 0x7f) | 0x80);
                length >>= 7;
            }
            car.push(length as u8);
            car.extend(bytes);
        };
        section(serde_ipld_dagcbor::to_vec(&header).expect("a header encodes"));
        for (cid, data) in blocks {
            section([cid.to_bytes(), data].concat());
        }
        car
    }

    /// The blocks of a tree `levels` deep holding `key` at `record` in its lowest node (each
    /// node above holds nothing but its left subtree), and its root.
    fn tree_of_depth(levels: usize, key: &[u8], record: Cid) -> (HashMap<Cid, Vec<u8>>, Cid) {
        let node = |left: Ipld, entries: Vec<Ipld>| {
            Ipld::Map(
                [
                    ("l".to_owned(), left),
                    ("e".to_owned(), Ipld::List(entries)),
                ]
                .into(),
            )
        };
        let entry = Ipld::Map(
            [
                ("p".to_owned(), Ipld::Integer(0)),
                ("k".to_owned(), Ipld::Bytes(key.to_vec())),
                ("v".to_owned(), Ipld::Link(record)),
                ("t".to_owned(), Ipld::Null),
            ]
            .into(),
        );
        let mut blocks = HashMap::new();
        let mut below = node(Ipld::Null, vec![entry]);
        for level in 1..=levels {
            let bytes = serde_ipld_dagcbor::to_vec(&below).expect("a node encodes");
            let hash = cid::multihash::Multihash::<64>::wrap(SHA2_256, &Sha256::digest(&bytes))
                .expect("a sha2-256 digest fits");
            let cid = Cid::new_v1(DAG_CBOR, hash);
            blocks.insert(cid, bytes);
            if level == levels {
                return (blocks, cid);
            }
            below = node(Ipld::Link(cid), Vec::new());
        }
        unreachable!("at least one level")
    }

    #[test]
    fn a_tree_of_64_levels_is_walked_and_one_deeper_is_refused() {
        let hash = cid::multihash::Multihash::<64>::wrap(SHA2_256, &Sha256::digest(b"record"))
            .expect("a sha2-256 digest fits");
        let record = Cid::new_v1(DAG_CBOR, hash);
        let key = b"computer.socialweb.infra/self";
        let (blocks, root) = tree_of_depth(MAX_DEPTH, key, record);
        assert_eq!(find(&blocks, root, key).unwrap(), Some(record));
        let (blocks, root) = tree_of_depth(MAX_DEPTH + 1, key, record);
        match find(&blocks, root, key) {
            Err(ProofError::Tree(why)) => assert_eq!(why, "deeper than 64 levels"),
            other => panic!("a 65-level tree must be refused: {other:?}"),
        }
    }

    #[test]
    fn a_proof_of_512_blocks_is_read_and_one_more_is_refused() {
        let (_, blocks) = read_car(&car_of(MAX_BLOCKS), MAX_BLOCKS).expect("512 blocks are read");
        assert_eq!(blocks.len(), 512);
        let refused = read_car(&car_of(MAX_BLOCKS + 1), MAX_BLOCKS).unwrap_err();
        assert_eq!(
            refused.to_string(),
            ProofError::Car("more than 512 blocks".into()).to_string()
        );
    }
}
