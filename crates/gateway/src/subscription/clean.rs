//! A gateway's frame made fit to keep and show: every free text (a phase or state the lexicon
//! does not know, an instance, a server, a node's names and message, an info message) passes
//! the one cleaner, [`peer_text`], cut to its lexicon's length; what must be an identifier (a
//! cluster's name, a member's DID) is checked, and a frame naming a bad one is refused whole.
//! Fields the lexicon does not define, and frames of kinds it does not define, are not kept.
//!
//! Invariant: no text of a kept frame holds a control or a bidi override, or passes its
//! lexicon's `maxLength`.

use swdesk_lexicon::com::publicdomainrelay::temp::cluster::defs::{ClusterView, Phase};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::subscribe_clusters::{
    Cluster, Info, InfoName, Member, MemberState, Message, NodeClaim, NodeClaimPhase,
};
use swdesk_lexicon::syntax;
use swdesk_lexicon::text::peer_text;

/// The longest phase or state a gateway may name.
const WORD: usize = 64;
/// The longest name the lexicon allows (instance, member, node).
const NAME: usize = 253;
/// The longest server URL.
const URL: usize = 2048;
/// The longest message kept.
const MESSAGE: usize = 512;

/// Why a frame was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// A cluster's name that is not a DNS-1123 label.
    #[error("a cluster name that is not a DNS-1123 label ({0})")]
    ClusterName(String),
    /// A member's DID that is not a DID.
    #[error("a member DID that is not a DID ({0})")]
    Did(String),
    /// A frame of a kind the lexicon does not define.
    #[error("a frame of an unknown kind")]
    Unknown,
}

/// `message` cleaned, or why it is refused (its bad identifier shown cleaned and cut).
pub fn message(message: Message) -> Result<Message, Refused> {
    Ok(match message {
        Message::Cluster(cluster) => Message::Cluster(self::cluster(cluster)?),
        Message::Member(member) => Message::Member(self::member(member)?),
        Message::NodeClaim(node) => Message::NodeClaim(self::node(node)?),
        Message::Info(info) => Message::Info(self::info(info)),
        Message::Other(_) => return Err(Refused::Unknown),
    })
}

fn cluster(cluster: Cluster) -> Result<Cluster, Refused> {
    Ok(Cluster {
        name: label(cluster.name)?,
        phase: phase(cluster.phase),
        instance: cluster.instance.map(|text| peer_text(&text, NAME)),
        server: cluster.server.map(|text| peer_text(&text, URL)),
        extra: serde_json::Map::new(),
        ..cluster
    })
}

/// A cluster of a `listClusters` answer cleaned as a feed's cluster is, or why it is refused.
pub fn cluster_view(view: ClusterView) -> Result<ClusterView, Refused> {
    Ok(ClusterView {
        name: label(view.name)?,
        phase: phase(view.phase),
        instance: view.instance.map(|text| peer_text(&text, NAME)),
        server: view.server.map(|text| peer_text(&text, URL)),
        extra: serde_json::Map::new(),
        ..view
    })
}

fn phase(phase: Phase) -> Phase {
    match phase {
        Phase::Other(other) => Phase::Other(peer_text(&other, WORD)),
        known => known,
    }
}

fn member(member: Member) -> Result<Member, Refused> {
    if syntax::did(&member.did).is_err() {
        return Err(Refused::Did(shown(&member.did)));
    }
    Ok(Member {
        cluster: label(member.cluster)?,
        name: member.name.map(|text| peer_text(&text, NAME)),
        state: member.state.map(|state| match state {
            MemberState::Other(other) => MemberState::Other(peer_text(&other, WORD)),
            known => known,
        }),
        extra: serde_json::Map::new(),
        ..member
    })
}

fn node(node: NodeClaim) -> Result<NodeClaim, Refused> {
    let infra = node.infra.map(|infra| {
        let did = infra.workspace.filter(|did| syntax::did(did).is_ok());
        swdesk_lexicon::com::publicdomainrelay::temp::cluster::subscribe_clusters::NodeClaimInfra {
            workspace: did,
            name: peer_text(&infra.name, NAME),
            contract: peer_text(&infra.contract, NAME),
            compute_contract: infra.compute_contract.map(|text| peer_text(&text, URL)),
            extra: serde_json::Map::new(),
        }
    });
    Ok(NodeClaim {
        cluster: label(node.cluster)?,
        name: peer_text(&node.name, NAME),
        phase: node.phase.map(|phase| match phase {
            NodeClaimPhase::Other(other) => NodeClaimPhase::Other(peer_text(&other, WORD)),
            known => known,
        }),
        node_name: node.node_name.map(|text| peer_text(&text, NAME)),
        message: node.message.map(|text| peer_text(&text, MESSAGE)),
        infra,
        extra: serde_json::Map::new(),
        ..node
    })
}

fn info(info: Info) -> Info {
    Info {
        name: match info.name {
            InfoName::Other(other) => InfoName::Other(peer_text(&other, WORD)),
            known => known,
        },
        message: info.message.map(|text| peer_text(&text, MESSAGE)),
        extra: serde_json::Map::new(),
    }
}

/// `name` when it is a DNS-1123 label: 1 to 63 of `a-z`, `0-9` and `-`, not at either end.
fn label(name: String) -> Result<String, Refused> {
    let bytes = name.as_bytes();
    let fits = (1..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.first() != Some(&b'-')
        && bytes.last() != Some(&b'-');
    if fits {
        Ok(name)
    } else {
        Err(Refused::ClusterName(shown(&name)))
    }
}

/// A refused identifier as a reason may show it: cleaned, at most 80 bytes.
fn shown(text: &str) -> String {
    format!("{:?}", peer_text(text, 80))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn frame(value: serde_json::Value) -> Message {
        serde_json::from_value(value).unwrap()
    }

    fn is_clean(text: &str) -> bool {
        !text.chars().any(|c| {
            c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
        })
    }

    #[test]
    fn free_texts_lose_their_controls_and_bidi_overrides() {
        let hostile = "Re\u{202E}ady\n\u{0}<b>";
        let node = frame(
            json!({"$type": "#nodeClaim", "cluster": "dev", "name": hostile,
            "phase": hostile, "message": hostile.repeat(200), "nodeName": hostile,
            "infra": {"workspace": hostile, "name": hostile, "contract": hostile}}),
        );
        let Ok(Message::NodeClaim(node)) = message(node) else {
            panic!("kept")
        };
        let NodeClaimPhase::Other(phase) = node.phase.unwrap() else {
            panic!("unknown phase")
        };
        let message = node.message.unwrap();
        assert!(message.len() <= MESSAGE, "{}", message.len());
        let infra = node.infra.unwrap();
        assert_eq!(infra.workspace, None, "not a DID: dropped");
        for text in [&node.name, &phase, &message, &infra.name, &infra.contract] {
            assert!(is_clean(text), "{text:?}");
        }
        assert_eq!(phase, "Ready  <b>");
    }

    #[test]
    fn a_bad_cluster_name_or_member_did_refuses_the_frame() {
        let cluster = frame(json!({"$type": "#cluster", "name": "ev\u{202E}il", "phase": "Ready"}));
        assert_eq!(
            message(cluster).unwrap_err().to_string(),
            "a cluster name that is not a DNS-1123 label (\"evil\")"
        );
        let member = frame(json!({"$type": "#member", "cluster": "dev", "did": "did:plc:a\u{0}b"}));
        assert!(matches!(message(member), Err(Refused::Did(_))));
        let good = frame(
            json!({"$type": "#member", "cluster": "dev", "did": "did:plc:ab",
            "state": "Gone\u{2066}"}),
        );
        let Ok(Message::Member(member)) = message(good) else {
            panic!("kept")
        };
        assert_eq!(member.state, Some(MemberState::Other("Gone".to_owned())));
    }
}
