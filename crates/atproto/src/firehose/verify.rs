//! A `#commit` checked before anything of it is applied, with `proof`'s checks: every block of
//! its CAR slice hashes to its CID; the CAR's root is the commit the frame names, a version-3
//! commit of the followed DID at the frame's revision, signed by the DID's `#atproto` key; and
//! each op is what the signed tree says: a create or update's record is in the tree under the
//! commit at exactly the op's CID, its block in the slice (its value read from those bytes); a
//! delete's key is shown absent. A commit that fails any check is refused whole, naming why.

use cid::Cid;
use swdesk_kernel::repo::live::{OpRecord, RepoOp};

use super::frame::{Action, CommitFrame};
use crate::did_key::PublicKey;
use crate::proof::{self, ProofError};

/// The most blocks one commit's slice may hold (200 ops, each a record and its tree path).
pub const MAX_COMMIT_BLOCKS: usize = 4096;

/// Why a commit is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommitError {
    /// A check of its blocks or signature failed.
    #[error("{0}")]
    Proof(#[from] ProofError),
    /// The frame and its blocks disagree.
    #[error("the commit frame does not match its blocks: {0}")]
    Mismatch(String),
}

impl CommitError {
    /// Whether the refusal is the signature alone (the key may have rotated: resolve it again).
    pub fn is_signature(&self) -> bool {
        matches!(self, CommitError::Proof(ProofError::Signature(_)))
    }
}

/// `frame`'s ops, once its blocks prove them for `did`, whose signing key is `key`.
pub fn verify_commit(
    frame: &CommitFrame,
    did: &str,
    key: &PublicKey,
) -> Result<Vec<RepoOp>, CommitError> {
    let mismatch = |why: String| CommitError::Mismatch(why);
    if frame.repo != did {
        return Err(mismatch("it is a commit of another repo".to_owned()));
    }
    let (root, blocks) = proof::read_car(&frame.blocks, MAX_COMMIT_BLOCKS)?;
    if root != frame.commit {
        return Err(mismatch(format!(
            "the frame names commit {} but the blocks' root is {root}",
            frame.commit
        )));
    }
    let (data, rev) = proof::check_commit(&proof::decode(&blocks, &root)?, did, key)?;
    if rev != frame.rev {
        return Err(mismatch(format!(
            "the frame says rev {} but the signed commit is at {rev}",
            frame.rev
        )));
    }
    let mut ops = Vec::with_capacity(frame.ops.len());
    for op in &frame.ops {
        let found = proof::find(&blocks, data, op.path.as_bytes())?;
        let Some((collection, rkey)) = op.path.split_once('/') else {
            return Err(mismatch(format!("the path {:?} has no rkey", op.path)));
        };
        let record = match (op.action, op.cid, found) {
            (Action::Delete, _, None) => None,
            (Action::Create | Action::Update, Some(stated), Some(held)) if stated == held => {
                Some(record(&blocks, held)?)
            }
            (_, stated, held) => {
                return Err(mismatch(format!(
                    "{} says {} but the signed tree holds {}",
                    op.path,
                    named(stated),
                    named(held)
                )));
            }
        };
        ops.push(RepoOp {
            collection: collection.to_owned(),
            rkey: rkey.to_owned(),
            record,
        });
    }
    Ok(ops)
}

fn record(
    blocks: &std::collections::HashMap<Cid, Vec<u8>>,
    cid: Cid,
) -> Result<OpRecord, CommitError> {
    let value = proof::decode(blocks, &cid)?;
    let value = swdesk_lexicon::data_model::from_ipld(&value)
        .map_err(|error| ProofError::Record(error.to_string()))?;
    Ok(OpRecord {
        cid: cid.to_string(),
        value,
    })
}

fn named(cid: Option<Cid>) -> String {
    cid.map_or_else(|| "nothing".to_owned(), |cid| cid.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::attestation::{AttestationKey, Curve};
    use crate::firehose::forge::{Forged, commit_frame};
    use crate::firehose::frame::{Frame, decode};

    const DID: &str = "did:plc:owner";

    fn commit(ops: Vec<(String, Option<serde_json::Value>)>, key: &AttestationKey) -> CommitFrame {
        let forged = Forged {
            seq: 1,
            did: DID,
            rev: "3kb",
            since: None,
            ops,
        };
        match decode(&commit_frame(&forged, key)) {
            Ok(Frame::Commit(commit)) => commit,
            other => panic!("not a commit: {other:?}"),
        }
    }

    fn record() -> serde_json::Value {
        json!({"$type": "computer.socialweb.infra", "description": "vm"})
    }

    #[test]
    fn a_signed_commit_gives_its_ops_with_records_read_from_their_blocks() {
        let key = AttestationKey::generate(Curve::K256);
        let frame = commit(
            vec![("computer.socialweb.infra/a".into(), Some(record()))],
            &key,
        );
        let ops = verify_commit(&frame, DID, &key.public_key()).unwrap();
        assert_eq!(ops.len(), 1);
        assert_eq!(
            (ops[0].collection.as_str(), ops[0].rkey.as_str()),
            ("computer.socialweb.infra", "a")
        );
        let held = ops[0].record.as_ref().unwrap();
        assert_eq!(held.value, record());
        assert_eq!(
            held.cid,
            swdesk_lexicon::cid::record_cid(&record())
                .unwrap()
                .to_string()
        );
    }

    #[test]
    fn a_commit_signed_by_another_key_is_refused_as_a_signature() {
        let frame = commit(
            vec![("x.y.z/a".into(), Some(record()))],
            &AttestationKey::generate(Curve::K256),
        );
        let owner = AttestationKey::generate(Curve::K256).public_key();
        let error = verify_commit(&frame, DID, &owner).unwrap_err();
        assert!(error.is_signature(), "{error}");
    }

    #[test]
    fn a_stated_op_the_signed_tree_does_not_hold_is_refused() {
        let key = AttestationKey::generate(Curve::K256);
        let mut frame = commit(vec![("x.y.z/a".into(), Some(record()))], &key);
        frame.ops[0].path = "x.y.z/b".into();
        let error = verify_commit(&frame, DID, &key.public_key()).unwrap_err();
        assert!(error.to_string().contains("x.y.z/b says"), "{error}");
        let mut frame = commit(vec![("x.y.z/a".into(), Some(record()))], &key);
        frame.ops[0].action = Action::Delete;
        assert!(verify_commit(&frame, DID, &key.public_key()).is_err());
    }

    #[test]
    fn a_commit_of_another_repo_or_with_another_rev_or_root_is_refused() {
        let key = AttestationKey::generate(Curve::K256);
        let frame = commit(vec![("x.y.z/a".into(), Some(record()))], &key);
        assert!(verify_commit(&frame, "did:plc:other", &key.public_key()).is_err());
        let mut rev = frame.clone();
        rev.rev = "3kz".into();
        let error = verify_commit(&rev, DID, &key.public_key()).unwrap_err();
        assert!(
            error.to_string().contains("signed commit is at 3kb"),
            "{error}"
        );
        let mut root = frame.clone();
        root.commit = swdesk_lexicon::cid::cid_of_dag_cbor(b"other");
        assert!(verify_commit(&root, DID, &key.public_key()).is_err());
    }

    #[test]
    fn every_truncation_and_a_flipped_byte_of_the_blocks_is_refused() {
        let key = AttestationKey::generate(Curve::K256);
        let frame = commit(vec![("x.y.z/a".into(), Some(record()))], &key);
        for end in 0..frame.blocks.len() {
            let mut cut = frame.clone();
            cut.blocks.truncate(end);
            assert!(
                verify_commit(&cut, DID, &key.public_key()).is_err(),
                "cut at {end}"
            );
        }
        let mut flipped = frame.clone();
        let last = flipped.blocks.len() - 1;
        flipped.blocks[last] ^= 1;
        assert!(verify_commit(&flipped, DID, &key.public_key()).is_err());
    }
}
