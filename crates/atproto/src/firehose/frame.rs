//! One `com.atproto.sync.subscribeRepos` frame read: a DAG-CBOR header `{op, t}` then a
//! DAG-CBOR body, into a [`Frame`]. Nothing in a frame is trusted: its size is capped before it
//! is read ([`MAX_FRAME`]), a commit names at most [`MAX_OPS`] ops and [`MAX_BLOCKS_BYTES`]
//! bytes of blocks, every field is checked for its type, trailing bytes are refused, and the
//! texts a peer chose (error and info messages, account statuses) pass `peer_text` before
//! anything keeps or logs them. A frame is decoded, not verified: `verify.rs` checks commits.

use cid::Cid;
use ipld_core::ipld::Ipld;
use serde::Deserialize as _;
use swdesk_lexicon::text::peer_text;

/// The largest frame read (the spec caps a commit's blocks at 2 MB; headroom for the rest).
pub const MAX_FRAME: usize = 3 << 20;
/// The most ops one commit may carry (the spec's limit is 200).
pub const MAX_OPS: usize = 200;
/// The most bytes of blocks one commit may carry (the spec's 2 MB).
pub const MAX_BLOCKS_BYTES: usize = 2_000_000;
/// The longest text kept from a peer (an error, an info message, a status).
const MAX_TEXT: usize = 256;

/// A decoded frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// `#commit`: a repo changed.
    Commit(CommitFrame),
    /// `#sync`: a repo's state was reset; its ops are not given.
    Sync {
        /// Its sequence number.
        seq: i64,
        /// The repo.
        did: String,
        /// The revision it is now at.
        rev: String,
    },
    /// `#identity`: a repo's DID document or handle may have changed.
    Identity {
        /// Its sequence number.
        seq: i64,
        /// The account.
        did: String,
    },
    /// `#account`: an account's hosting status changed.
    Account {
        /// Its sequence number.
        seq: i64,
        /// The account.
        did: String,
        /// Whether it is active.
        active: bool,
        /// Why not, if not (cleaned).
        status: Option<String>,
    },
    /// `#info`: a notice from the server (`OutdatedCursor`: the cursor is older than what it
    /// keeps; events follow from its oldest).
    Info {
        /// Its name (cleaned).
        name: String,
        /// Its message (cleaned).
        message: Option<String>,
    },
    /// An error frame (`op: -1`): the server ends the stream.
    Error {
        /// The error's name (cleaned).
        error: String,
        /// Its message (cleaned).
        message: Option<String>,
    },
    /// A message type this version does not know: skipped, its sequence number kept.
    Unknown {
        /// Its type (cleaned).
        kind: String,
        /// Its sequence number, if it has one.
        seq: Option<i64>,
    },
}

impl Frame {
    /// The frame's sequence number, if it has one.
    pub fn seq(&self) -> Option<i64> {
        match self {
            Frame::Commit(commit) => Some(commit.seq),
            Frame::Sync { seq, .. } | Frame::Identity { seq, .. } | Frame::Account { seq, .. } => {
                Some(*seq)
            }
            Frame::Unknown { seq, .. } => *seq,
            Frame::Info { .. } | Frame::Error { .. } => None,
        }
    }
}

/// A `#commit` as sent, not yet verified.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitFrame {
    /// Its sequence number.
    pub seq: i64,
    /// The repo.
    pub repo: String,
    /// The commit's CID (the CAR's root).
    pub commit: Cid,
    /// The commit's revision.
    pub rev: String,
    /// The revision before it, if the repo had one.
    pub since: Option<String>,
    /// The server could not fit the commit's blocks: the ops must be read another way.
    pub too_big: bool,
    /// The CAR slice: the commit block, the changed tree nodes, the new records.
    pub blocks: Vec<u8>,
    /// Its ops, as the server states them.
    pub ops: Vec<OpFrame>,
}

/// One op of a commit, as stated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpFrame {
    /// `create`, `update` or `delete`.
    pub action: Action,
    /// `collection/rkey`.
    pub path: String,
    /// The record's new CID (none for a delete).
    pub cid: Option<Cid>,
}

/// What an op does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A new record.
    Create,
    /// A record replaced.
    Update,
    /// A record removed.
    Delete,
}

/// Why a frame does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a subscribeRepos frame does not read: {}", .0.join("; "))]
pub struct FrameError(pub Vec<String>);

/// Decodes one frame of at most [`MAX_FRAME`] bytes.
pub fn decode(bytes: &[u8]) -> Result<Frame, FrameError> {
    let one = |why: String| FrameError(vec![why]);
    if bytes.len() > MAX_FRAME {
        return Err(one(format!(
            "{} bytes; at most {MAX_FRAME} are read",
            bytes.len()
        )));
    }
    let mut decoder = serde_ipld_dagcbor::de::Deserializer::from_slice(bytes);
    let header = Ipld::deserialize(&mut decoder).map_err(|e| one(format!("header: {e}")))?;
    let body = Ipld::deserialize(&mut decoder).map_err(|e| one(format!("body: {e}")))?;
    decoder
        .end()
        .map_err(|e| one(format!("bytes after the body: {e}")))?;
    let mut fields = Fields::new(&header);
    let op = fields.integer("op");
    let kind = fields.optional_text("t");
    fields.done()?;
    match op {
        Some(-1) => error_frame(&body),
        Some(1) => message(kind.as_deref().unwrap_or_default(), &body),
        other => Err(one(format!("the header's op is {other:?}, not 1 or -1"))),
    }
}

fn error_frame(body: &Ipld) -> Result<Frame, FrameError> {
    let mut fields = Fields::new(body);
    let error = fields.text("error");
    let message = fields.optional_text("message");
    fields.done()?;
    Ok(Frame::Error {
        error: clean(&error.unwrap_or_default()),
        message: message.as_deref().map(clean),
    })
}

fn message(kind: &str, body: &Ipld) -> Result<Frame, FrameError> {
    let mut fields = Fields::new(body);
    let frame = match kind {
        "#commit" => Frame::Commit(commit(&mut fields)),
        "#sync" => Frame::Sync {
            seq: fields.integer("seq").unwrap_or_default(),
            did: fields.text("did").unwrap_or_default(),
            rev: fields.text("rev").unwrap_or_default(),
        },
        "#identity" => Frame::Identity {
            seq: fields.integer("seq").unwrap_or_default(),
            did: fields.text("did").unwrap_or_default(),
        },
        "#account" => Frame::Account {
            seq: fields.integer("seq").unwrap_or_default(),
            did: fields.text("did").unwrap_or_default(),
            active: fields.boolean("active").unwrap_or_default(),
            status: fields.optional_text("status").as_deref().map(clean),
        },
        "#info" => Frame::Info {
            name: clean(&fields.text("name").unwrap_or_default()),
            message: fields.optional_text("message").as_deref().map(clean),
        },
        other => {
            let seq = fields.optional_integer("seq");
            return Ok(Frame::Unknown {
                kind: clean(other),
                seq,
            });
        }
    };
    fields.done()?;
    Ok(frame)
}

fn commit(fields: &mut Fields<'_>) -> CommitFrame {
    let blocks = fields.bytes("blocks").unwrap_or_default();
    if blocks.len() > MAX_BLOCKS_BYTES {
        fields.problem(format!(
            "the commit's blocks are {} bytes; at most {MAX_BLOCKS_BYTES}",
            blocks.len()
        ));
    }
    CommitFrame {
        seq: fields.integer("seq").unwrap_or_default(),
        repo: fields.text("repo").unwrap_or_default(),
        commit: fields.link("commit").unwrap_or_default(),
        rev: fields.text("rev").unwrap_or_default(),
        since: fields.optional_text("since"),
        too_big: fields.boolean("tooBig").unwrap_or_default(),
        blocks,
        ops: ops(fields),
    }
}

fn ops(fields: &mut Fields<'_>) -> Vec<OpFrame> {
    let Some(list) = fields.list("ops") else {
        return Vec::new();
    };
    if list.len() > MAX_OPS {
        fields.problem(format!(
            "the commit has {} ops; at most {MAX_OPS}",
            list.len()
        ));
        return Vec::new();
    }
    let mut ops = Vec::with_capacity(list.len());
    for (index, item) in list.iter().enumerate() {
        let mut op = Fields::new(item);
        let action = match op.text("action").as_deref() {
            Some("create") => Some(Action::Create),
            Some("update") => Some(Action::Update),
            Some("delete") => Some(Action::Delete),
            Some(other) => {
                op.problem(format!(
                    "action {:?} is not create, update or delete",
                    clean(other)
                ));
                None
            }
            None => None,
        };
        let path = op.text("path").unwrap_or_default();
        let cid = op.optional_link("cid");
        let expected = action.map(|action| action != Action::Delete);
        if expected.is_some_and(|needs| needs != cid.is_some()) {
            op.problem("a create or update has a cid, a delete none".to_owned());
        }
        for problem in op.problems {
            fields.problem(format!("op {index}: {problem}"));
        }
        if let Some(action) = action {
            ops.push(OpFrame { action, path, cid });
        }
    }
    ops
}

/// A peer's text, one clean line.
fn clean(text: &str) -> String {
    peer_text(text, MAX_TEXT)
}

/// A map's fields read one by one, every problem gathered.
struct Fields<'a> {
    map: Option<&'a std::collections::BTreeMap<String, Ipld>>,
    problems: Vec<String>,
}

impl<'a> Fields<'a> {
    fn new(value: &'a Ipld) -> Self {
        match value {
            Ipld::Map(map) => Self {
                map: Some(map),
                problems: Vec::new(),
            },
            _ => Self {
                map: None,
                problems: vec!["it is not a map".to_owned()],
            },
        }
    }

    fn problem(&mut self, why: String) {
        self.problems.push(why);
    }

    fn done(self) -> Result<(), FrameError> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(FrameError(self.problems))
        }
    }

    fn field(&mut self, name: &str, required: bool) -> Option<&'a Ipld> {
        let found = self.map?.get(name).filter(|value| **value != Ipld::Null);
        if found.is_none() && required {
            self.problems.push(format!("{name} is missing"));
        }
        found
    }

    fn typed<T>(
        &mut self,
        name: &str,
        required: bool,
        what: &str,
        read: impl FnOnce(&'a Ipld) -> Option<T>,
    ) -> Option<T> {
        let value = self.field(name, required)?;
        let read = read(value);
        if read.is_none() {
            self.problems.push(format!("{name} is not {what}"));
        }
        read
    }

    fn integer(&mut self, name: &str) -> Option<i64> {
        self.typed(name, true, "an integer", integer)
    }

    fn optional_integer(&mut self, name: &str) -> Option<i64> {
        self.typed(name, false, "an integer", integer)
    }

    fn text(&mut self, name: &str) -> Option<String> {
        self.typed(name, true, "a string", text)
    }

    fn optional_text(&mut self, name: &str) -> Option<String> {
        self.typed(name, false, "a string", text)
    }

    fn boolean(&mut self, name: &str) -> Option<bool> {
        self.typed(name, true, "a boolean", |value| match value {
            Ipld::Bool(flag) => Some(*flag),
            _ => None,
        })
    }

    fn bytes(&mut self, name: &str) -> Option<Vec<u8>> {
        self.typed(name, true, "bytes", |value| match value {
            Ipld::Bytes(bytes) => Some(bytes.clone()),
            _ => None,
        })
    }

    fn link(&mut self, name: &str) -> Option<Cid> {
        self.typed(name, true, "a link", link)
    }

    fn optional_link(&mut self, name: &str) -> Option<Cid> {
        self.typed(name, false, "a link", link)
    }

    fn list(&mut self, name: &str) -> Option<&'a Vec<Ipld>> {
        self.typed(name, true, "a list", |value| match value {
            Ipld::List(list) => Some(list),
            _ => None,
        })
    }
}

fn integer(value: &Ipld) -> Option<i64> {
    match value {
        Ipld::Integer(number) => i64::try_from(*number).ok(),
        _ => None,
    }
}

fn text(value: &Ipld) -> Option<String> {
    match value {
        Ipld::String(text) => Some(text.clone()),
        _ => None,
    }
}

fn link(value: &Ipld) -> Option<Cid> {
    match value {
        Ipld::Link(cid) => Some(*cid),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::attestation::{AttestationKey, Curve};
    use crate::firehose::forge::{Forged, commit_frame, frame, map};

    fn forged() -> Vec<u8> {
        let commit = Forged {
            seq: 42,
            did: "did:plc:owner",
            rev: "3kb",
            since: Some("3ka"),
            ops: vec![(
                "x.y.z/a".to_owned(),
                Some(json!({"$type": "x.y.z", "n": 1})),
            )],
        };
        commit_frame(&commit, &AttestationKey::generate(Curve::K256))
    }

    #[test]
    fn a_commit_frame_reads_with_its_sequence_revisions_and_ops() {
        let Ok(Frame::Commit(commit)) = decode(&forged()) else {
            panic!("a commit");
        };
        assert_eq!((commit.seq, commit.repo.as_str()), (42, "did:plc:owner"));
        assert_eq!(
            (commit.rev.as_str(), commit.since.as_deref()),
            ("3kb", Some("3ka"))
        );
        assert_eq!(commit.ops.len(), 1);
        assert_eq!(commit.ops[0].action, Action::Create);
        assert_eq!(commit.ops[0].path, "x.y.z/a");
        assert!(!commit.too_big);
    }

    #[test]
    fn every_truncation_of_a_frame_is_refused_never_read_as_something_else() {
        let bytes = forged();
        for end in 0..bytes.len() {
            assert!(decode(&bytes[..end]).is_err(), "cut at {end} read");
        }
    }

    #[test]
    fn bytes_after_the_body_are_refused() {
        let mut bytes = forged();
        bytes.push(0);
        let error = decode(&bytes).unwrap_err();
        assert!(error.to_string().contains("after the body"), "{error}");
    }

    #[test]
    fn a_frame_over_the_cap_is_refused_before_it_is_read() {
        let error = decode(&vec![0; MAX_FRAME + 1]).unwrap_err();
        assert!(error.to_string().contains("at most"), "{error}");
    }

    #[test]
    fn too_many_ops_and_every_bad_op_are_named_at_once() {
        let op = map([
            ("action", Ipld::String("create".into())),
            ("path", Ipld::String("a/b".into())),
        ]);
        let many = Ipld::List(vec![op; MAX_OPS + 1]);
        let bad = Ipld::List(vec![
            map([
                ("action", Ipld::String("explode".into())),
                ("path", Ipld::String("a/b".into())),
            ]),
            map([
                ("action", Ipld::String("create".into())),
                ("path", Ipld::Integer(3)),
            ]),
        ]);
        let body = |ops: Ipld| {
            map([
                ("seq", Ipld::Integer(1)),
                ("repo", Ipld::String("did:plc:x".into())),
                ("commit", Ipld::Link(Cid::default())),
                ("rev", Ipld::String("3k".into())),
                ("tooBig", Ipld::Bool(false)),
                ("blocks", Ipld::Bytes(Vec::new())),
                ("ops", ops),
            ])
        };
        let error = decode(&frame("#commit", &body(many)))
            .unwrap_err()
            .to_string();
        assert!(error.contains("201 ops; at most 200"), "{error}");
        let error = decode(&frame("#commit", &body(bad)))
            .unwrap_err()
            .to_string();
        assert!(error.contains("op 0: action \"explode\""), "{error}");
        assert!(error.contains("op 1: path is not a string"), "{error}");
        assert!(
            error.contains("op 1: a create or update has a cid"),
            "{error}"
        );
    }

    #[test]
    fn an_error_frame_reads_with_its_texts_cleaned() {
        let header = map([("op", Ipld::Integer(-1))]);
        let body = map([
            ("error", Ipld::String("FutureCursor".into())),
            (
                "message",
                Ipld::String("bad\u{1b}[31m\u{202e}cursor\nnext".into()),
            ),
        ]);
        let mut bytes = serde_ipld_dagcbor::to_vec(&header).unwrap();
        bytes.extend(serde_ipld_dagcbor::to_vec(&body).unwrap());
        let Ok(Frame::Error { error, message }) = decode(&bytes) else {
            panic!("an error frame");
        };
        assert_eq!(error, "FutureCursor");
        let message = message.unwrap();
        assert!(
            !message.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{message:?}"
        );
    }

    #[test]
    fn a_frame_of_an_unknown_type_keeps_its_sequence_and_a_wrong_field_type_is_named() {
        let unknown = frame("#labels", &map([("seq", Ipld::Integer(9))]));
        assert_eq!(
            decode(&unknown).unwrap(),
            Frame::Unknown {
                kind: "#labels".into(),
                seq: Some(9)
            }
        );
        let sync = frame("#sync", &map([("seq", Ipld::String("9".into()))]));
        let error = decode(&sync).unwrap_err().to_string();
        assert!(error.contains("seq is not an integer"), "{error}");
        assert!(
            error.contains("did is missing") && error.contains("rev is missing"),
            "{error}"
        );
        let header = map([("op", Ipld::Integer(7))]);
        let odd = serde_ipld_dagcbor::to_vec(&header).unwrap();
        let odd = [odd, serde_ipld_dagcbor::to_vec(&map([])).unwrap()].concat();
        assert!(
            decode(&odd)
                .unwrap_err()
                .to_string()
                .contains("op is Some(7)")
        );
    }
}
