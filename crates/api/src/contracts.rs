//! What the window shows of a contract's run on the market beyond its phase: the bids received
//! (with their cost and the winner marked), every bidder asked with its answer (a bid, a
//! refusal and why, or nothing), the guest's events, the phase history, and the
//! deployment's merged timeline; then the DIDs in it named ([`name_identities`]): bidder and
//! winner handles, and a link where the receipt record can be read on its author's PDS.
//!
//! Invariants: built from the ComputeContract objects in the store only (no network);
//! naming only fills what the [`Names`] know, so an unresolved DID stays shown as itself and no
//! link is made without a known PDS. The timeline is newest first.

use std::collections::BTreeSet;

use serde::Serialize;
use swdesk_auction::compute::{Answer, Asked, ComputeContractObject, GuestEvent, PhaseChange};
use swdesk_auction::trust::{LinkedRecord, RecordCheck};
use swdesk_core::infra::{Contract, ContractStatus, SeenChange};
use swdesk_kernel::repo::Provenance;
use swdesk_kernel::timestamp::Timestamp;
use swdesk_kernel::uri::RecordUri;
use url::Url;

use crate::identities::Names;
use crate::serde_name as text;

/// One contract of a deployment, declared and observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ContractView {
    /// The contract's name.
    pub name: String,
    /// What the owner asked for: `staged`, `requested` or `released`.
    pub state: String,
    /// When the last release was asked for (RFC 3339).
    pub release_requested_at: Option<String>,
    /// What it is now (`staged`, `requesting`, `deployed`, `releasing`, `released`,
    /// `failed`); `None` until the controller has looked at it.
    pub phase: Option<String>,
    /// The DID of the winning bidder.
    pub winner: Option<String>,
    /// The winner's handle, when known and verified.
    pub winner_handle: Option<String>,
    /// The receipt's at-uri.
    pub receipt: Option<String>,
    /// Where the receipt record can be read (its author's PDS `getRecord`), when known.
    pub receipt_url: Option<String>,
    /// What was verified of the receipt's record, once it is.
    pub receipt_checked: Option<CheckView>,
    /// What the contract says about itself (why it waits, why it failed).
    pub message: Option<String>,
    /// The bids received, as they arrived.
    pub bids: Vec<BidView>,
    /// Every bidder the RFP went to, each with its answer.
    pub asked: Vec<AskedView>,
    /// Whether a bidder refused what we signed (a strict peer that trusts only a key the
    /// owner's DID document lists): the card offers *Publish your market key*.
    pub offers_market_key: bool,
    /// The guest's events, oldest first.
    pub events: Vec<GuestEventView>,
    /// Its phase changes, oldest first.
    pub history: Vec<PhaseChangeView>,
    /// What the world says that its records do not, while it is deployed.
    pub drift: Option<DriftView>,
}

/// A contract's drift as the window shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DriftView {
    /// What differs, in words.
    pub detail: String,
    /// Since when (RFC 3339).
    pub since: String,
    /// The one-click fix: `release`, or `keeper` (the record's keeper fixes it: nothing to
    /// click here).
    pub fix: String,
}

/// A bid the contract received.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct BidView {
    /// The bidder's DID.
    pub bidder: String,
    /// The bidder's handle, when known and verified.
    pub bidder_handle: Option<String>,
    /// The bid record's at-uri.
    pub uri: String,
    /// When it arrived (RFC 3339).
    pub received_at: String,
    /// Its price as decimal text, when it names one.
    pub cost: Option<String>,
    /// Whether its bidder won the contract.
    pub won: bool,
    /// Why it does not count, when it was refused (one cut line).
    pub refused: Option<String>,
    /// What was verified of its record, when it was fetched.
    pub checked: Option<CheckView>,
}

/// A bidder the RFP went to, and what it did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct AskedView {
    /// The bidder's DID.
    pub bidder: String,
    /// Its handle, when known and verified.
    pub bidder_handle: Option<String>,
    /// `bid`, `refused` (our RFP), `bidRefused` (its bid does not count) or `noAnswer`.
    pub answer: String,
    /// A bid's price as decimal text, when it names one.
    pub cost: Option<String>,
    /// A refusal's reason: one line, cut and cleaned.
    pub reason: Option<String>,
}

impl From<&Asked> for AskedView {
    fn from(asked: &Asked) -> Self {
        let (answer, cost, reason) = match &asked.answer {
            Answer::Bid { cost } => ("bid", cost.clone(), None),
            Answer::Refused { rfp, reason, .. } => {
                let answer = if *rfp { "refused" } else { "bidRefused" };
                (answer, None, Some(reason.clone()))
            }
            Answer::NoAnswer => ("noAnswer", None, None),
        };
        Self {
            bidder: asked.bidder.clone(),
            bidder_handle: None,
            answer: answer.to_owned(),
            cost,
            reason,
        }
    }
}

/// Whether a bidder refused our RFP for our signature (not: refused a bid of its own): what
/// publishing the market key in the owner's DID document answers. Read from the structured
/// answer the market adapter kept (`signature_untrusted`, set when the bidder's refusal is the
/// public market's own refusal of a signature), never from the words of the reason, which are
/// the bidder's to choose.
pub fn offers_market_key(asked: &[Asked]) -> bool {
    asked.iter().any(|asked| {
        matches!(
            asked.answer,
            Answer::Refused {
                rfp: true,
                signature_untrusted: true,
                ..
            }
        )
    })
}

/// What was verified of a peer's record before it counted: proven by its repo's signed commit
/// or read on its PDS's word, and how its signing keys are bound to its author.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct CheckView {
    /// Whether its bytes were proven by its repo's signed commit.
    pub proven: bool,
    /// The check in one line ("proven by its repo's signed commit (rev …); signed with a key
    /// the author's DID document lists").
    pub summary: String,
    /// The peers' records it links to, as fetched, known collection or not.
    pub linked: Vec<LinkedView>,
}

/// A record a peer's record links to, shown raw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct LinkedView {
    /// Which link named it (`payload`, `bid.config`).
    pub link: String,
    /// Its at-uri.
    pub uri: String,
    /// Its cid.
    pub cid: String,
    /// Its collection.
    pub collection: String,
    /// Whether this app has a lexicon for the collection.
    pub known: bool,
    /// Proven by its repo (`Some(true)`), read unproven (`Some(false)`), or not read (`None`).
    pub proven: Option<bool>,
    /// Its value as compact JSON (cut and marked when long), or why it was not read.
    pub value: String,
}

impl From<&RecordCheck> for CheckView {
    fn from(check: &RecordCheck) -> Self {
        Self {
            proven: check.is_proven(),
            summary: check.describe(),
            linked: check.linked.iter().map(LinkedView::from).collect(),
        }
    }
}

impl From<&LinkedRecord> for LinkedView {
    fn from(linked: &LinkedRecord) -> Self {
        Self {
            link: linked.link.clone(),
            uri: linked.uri.clone(),
            cid: linked.cid.clone(),
            collection: linked.collection.clone(),
            known: linked.known,
            proven: (linked.provenance.as_ref())
                .map(|provenance| matches!(provenance, Provenance::Proven { .. })),
            value: linked.value.clone(),
        }
    }
}

/// An event the provider reported about the guest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct GuestEventView {
    /// What happened (`vm.started`, `vm.onNetwork`).
    pub kind: String,
    /// When (RFC 3339).
    pub at: String,
    /// What it tells (the guest's address), when anything.
    pub detail: Option<String>,
    /// The `market.event` record's at-uri.
    pub uri: String,
}

/// One change of a contract's phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct PhaseChangeView {
    /// The phase entered (`requesting`, `deployed`, ...).
    pub phase: String,
    /// When (RFC 3339).
    pub at: String,
    /// What the contract said then.
    pub message: Option<String>,
}

/// One phase change of one of the deployment's contracts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct TimelineEntry {
    /// The contract's name.
    pub contract: String,
    /// The phase entered.
    pub phase: String,
    /// When (RFC 3339).
    pub at: String,
    /// What the contract said then.
    pub message: Option<String>,
}

/// What a ComputeContract adds to its contract's view: bids, guest events, history, the
/// receipt's check (all empty without one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Observed {
    pub bids: Vec<BidView>,
    pub events: Vec<GuestEventView>,
    pub history: Vec<PhaseChangeView>,
    pub receipt_checked: Option<CheckView>,
    pub asked: Vec<AskedView>,
    pub offers_market_key: bool,
}

/// The bids, events and history of `compute`.
pub(crate) fn observed(compute: Option<&ComputeContractObject>) -> Observed {
    let Some(compute) = compute else {
        return Observed::default();
    };
    let status = &compute.status;
    let winner = status.winner.as_deref();
    Observed {
        bids: (status.bids.iter())
            .chain(&status.refused_bids)
            .map(|bid| BidView {
                bidder: bid.bidder.clone(),
                bidder_handle: None,
                uri: bid.record.uri.clone(),
                received_at: bid.received_at.to_rfc3339(),
                cost: bid.cost.clone(),
                won: bid.refused.is_none() && winner == Some(bid.bidder.as_str()),
                refused: bid.refused.clone(),
                checked: bid.checked.as_ref().map(CheckView::from),
            })
            .collect(),
        events: status.events.iter().map(event_view).collect(),
        history: status.history.iter().map(change_view).collect(),
        receipt_checked: status.receipt_checked.as_ref().map(CheckView::from),
        asked: status.asked.iter().map(AskedView::from).collect(),
        offers_market_key: offers_market_key(&status.asked),
    }
}

fn event_view(event: &GuestEvent) -> GuestEventView {
    GuestEventView {
        kind: event.kind.clone(),
        at: event.at.to_rfc3339(),
        detail: event.detail.clone(),
        uri: event.uri.clone(),
    }
}

fn change_view(change: &PhaseChange) -> PhaseChangeView {
    PhaseChangeView {
        phase: text(&change.phase.contract_phase()),
        at: change.at.to_rfc3339(),
        message: change.message.clone(),
    }
}

/// Every phase change of `computes` (contract name, object), newest first; ties by contract.
pub(crate) fn timeline<'a>(
    computes: impl IntoIterator<Item = (&'a str, &'a ComputeContractObject)>,
) -> Vec<TimelineEntry> {
    newest_first(
        computes
            .into_iter()
            .flat_map(|(name, compute)| compute.status.history.iter().map(move |c| (name, c)))
            .map(|(contract, change)| (change.at, entry(contract, change_view(change))))
            .collect(),
    )
}

/// The phase changes a follower saw of `contract` (it has no ComputeContract), oldest first.
pub(crate) fn seen_history(seen: &[SeenChange], contract: &str) -> Vec<PhaseChangeView> {
    seen.iter()
        .filter(|change| change.contract == contract)
        .map(seen_view)
        .collect()
}

/// Every phase change a follower saw, newest first; ties by contract.
pub(crate) fn seen_timeline(seen: &[SeenChange]) -> Vec<TimelineEntry> {
    newest_first(
        seen.iter()
            .map(|change| (change.at, entry(&change.contract, seen_view(change))))
            .collect(),
    )
}

fn seen_view(change: &SeenChange) -> PhaseChangeView {
    PhaseChangeView {
        phase: text(&change.phase),
        at: change.at.to_rfc3339(),
        message: change.message.clone(),
    }
}

fn entry(contract: &str, change: PhaseChangeView) -> TimelineEntry {
    TimelineEntry {
        contract: contract.to_owned(),
        phase: change.phase,
        at: change.at,
        message: change.message,
    }
}

fn newest_first(mut entries: Vec<(Timestamp, TimelineEntry)>) -> Vec<TimelineEntry> {
    entries.sort_by(|(a_at, a), (b_at, b)| b_at.cmp(a_at).then(a.contract.cmp(&b.contract)));
    entries.into_iter().map(|(_, entry)| entry).collect()
}

/// The DIDs `contracts` show: bidders, winners and receipt authors.
pub fn dids(contracts: &[ContractView]) -> BTreeSet<String> {
    let mut dids = BTreeSet::new();
    for contract in contracts {
        dids.extend(contract.bids.iter().map(|bid| bid.bidder.clone()));
        dids.extend(contract.asked.iter().map(|asked| asked.bidder.clone()));
        dids.extend(contract.winner.clone());
        dids.extend(contract.receipt.as_deref().and_then(author));
    }
    dids
}

/// Fills in what `names` know: bidder and winner handles, receipt links.
pub fn name_identities(contracts: &mut [ContractView], names: &Names) {
    for contract in contracts {
        name_contract(contract, names);
    }
}

fn name_contract(contract: &mut ContractView, names: &Names) {
    let handle = |did: &str| names.get(did).and_then(|named| named.handle.clone());
    for bid in &mut contract.bids {
        bid.bidder_handle = handle(&bid.bidder);
    }
    for asked in &mut contract.asked {
        asked.bidder_handle = handle(&asked.bidder);
    }
    contract.winner_handle = contract.winner.as_deref().and_then(handle);
    if let Some(message) = &mut contract.message {
        *message = named_text(message, names);
    }
    for change in &mut contract.history {
        if let Some(message) = &mut change.message {
            *message = named_text(message, names);
        }
    }
    contract.receipt_url = contract
        .receipt
        .as_deref()
        .and_then(|receipt| receipt_url(receipt, names));
}

/// `text` with each DID it names that has a verified handle in `names` said as `@handle`
/// ("deployed by @bidder.test"); a DID inside an at-uri (`at://did:…/…`) is left as it is,
/// since the URI must stay one to copy.
pub fn named_text(text: &str, names: &Names) -> String {
    let mut named = text.to_owned();
    for (did, handle) in names
        .iter()
        .filter_map(|(did, known)| Some((did, known.handle.as_deref()?)))
    {
        named = replace_bare(&named, did, &format!("@{handle}"));
    }
    named
}

/// `text` with each `needle` that stands alone (not inside an at-uri, not part of a longer
/// identifier) replaced by `with`.
fn replace_bare(text: &str, needle: &str, with: &str) -> String {
    let part_of_id =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, ':' | '.' | '_' | '-' | '%');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(needle) {
        let (before, after) = (&rest[..at], &rest[at + needle.len()..]);
        let alone = !before.ends_with("at://")
            && !before.chars().next_back().is_some_and(part_of_id)
            && !after.chars().next().is_some_and(part_of_id);
        out.push_str(before);
        out.push_str(if alone { with } else { needle });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Where the record at `uri` can be read: its author's PDS `com.atproto.repo.getRecord`.
pub fn receipt_url(uri: &str, names: &Names) -> Option<String> {
    let uri = RecordUri::parse(uri).ok()?;
    let pds = &names.get(uri.authority())?.pds;
    let mut url = pds.join("/xrpc/com.atproto.repo.getRecord").ok()?;
    url.query_pairs_mut()
        .append_pair("repo", uri.authority())
        .append_pair("collection", uri.collection())
        .append_pair("rkey", uri.rkey().as_str());
    Some(url.to_string())
}

/// `link` as a URL to open, when its host is `confirmed_host` (the host the owner was shown and
/// confirmed); refused, naming both, when the link now points elsewhere.
pub fn confirmed_link(link: &str, confirmed_host: &str) -> Result<Url, String> {
    let url =
        Url::parse(link).map_err(|error| format!("the receipt link is not a URL: {error}"))?;
    let host = url.host_str().unwrap_or_default();
    if !host.eq_ignore_ascii_case(confirmed_host) {
        return Err(format!(
            "the receipt is now at {host}, not at {}, the host you confirmed; nothing was opened",
            swdesk_lexicon::text::peer_text(confirmed_host, 253)
        ));
    }
    Ok(url)
}

/// The DID whose repo holds the record at `uri`.
pub fn author(uri: &str) -> Option<String> {
    RecordUri::parse(uri)
        .ok()
        .map(|uri| uri.authority().to_owned())
}

/// The view of the contract `declared`, as the deployment's status (`seen`) and its
/// ComputeContract (`compute`) show it.
pub fn contract_view(
    declared: &Contract,
    seen: Option<&ContractStatus>,
    compute: Option<&ComputeContractObject>,
) -> ContractView {
    let observed = observed(compute);
    ContractView {
        name: declared.name.clone(),
        state: text(&declared.state),
        release_requested_at: declared.release_requested_at.clone(),
        phase: seen.map(|seen| text(&seen.phase)),
        winner: seen.and_then(|seen| seen.winner.clone()),
        winner_handle: None,
        receipt: seen.and_then(|seen| seen.receipt.clone()),
        receipt_url: None,
        receipt_checked: observed.receipt_checked,
        message: seen.and_then(|seen| seen.message.clone()),
        offers_market_key: observed.offers_market_key,
        asked: observed.asked,
        bids: observed.bids,
        events: observed.events,
        history: observed.history,
        drift: seen
            .and_then(|seen| seen.drift.as_ref())
            .map(|drift| DriftView {
                detail: drift.detail.clone(),
                since: drift.since.to_rfc3339(),
                fix: text(&drift.fix()),
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identities::Named;

    fn names(did: &str, pds: &str) -> Names {
        [(
            did.to_owned(),
            Named {
                handle: Some("bidder.test".into()),
                pds: Url::parse(pds).expect("url"),
            },
        )]
        .into()
    }

    #[test]
    fn only_a_refusal_of_our_signature_offers_to_publish_the_market_key() {
        let refused = |rfp: bool, signature_untrusted: bool, reason: &str| Asked {
            bidder: "did:plc:strict".into(),
            answer: Answer::Refused {
                rfp,
                reason: reason.into(),
                signature_untrusted,
            },
        };
        let ours = "com.publicdomainrelay.temp.market.submitRfp answered 400: record is missing \
                    a valid badge.blue signature";
        assert!(offers_market_key(&[refused(true, true, ours)]));
        assert!(!offers_market_key(&[refused(true, false, "no capacity")]));
        assert!(
            !offers_market_key(&[refused(true, false, "we dislike your signature")]),
            "a bidder's words alone do not offer it"
        );
        assert!(
            !offers_market_key(&[refused(false, false, "its signature does not verify")]),
            "a bid we refused for its own signature is not ours to fix"
        );
        let silent = Asked {
            bidder: "did:plc:silent".into(),
            answer: Answer::NoAnswer,
        };
        assert!(!offers_market_key(&[silent]));
    }

    #[test]
    fn a_receipt_link_opens_only_at_the_host_the_owner_confirmed() {
        let link = "https://pds.bidder.example/xrpc/com.atproto.repo.getRecord?repo=did%3Aplc%3Ab";
        let url = confirmed_link(link, "PDS.bidder.example").unwrap();
        assert_eq!(url.as_str(), link);
        let refused = confirmed_link(link, "pds.other.example\u{202e}").unwrap_err();
        assert!(
            refused.contains("pds.bidder.example") && refused.contains("nothing was opened"),
            "{refused}"
        );
        assert!(
            !refused.contains('\u{202e}'),
            "the window's words are cleaned: {refused}"
        );
        assert!(confirmed_link("not a url", "x").is_err());
    }

    #[test]
    fn a_message_names_a_did_by_its_verified_handle_but_keeps_uris_whole() {
        let known = names("did:plc:bidder", "http://localhost:2583");
        let message = "deployed by did:plc:bidder (receipt at://did:plc:bidder/c/1), the winner";
        assert_eq!(
            named_text(message, &known),
            "deployed by @bidder.test (receipt at://did:plc:bidder/c/1), the winner"
        );
        assert_eq!(
            named_text("accepting the bid of did:plc:bidder2", &known),
            "accepting the bid of did:plc:bidder2",
            "a longer DID is another identity"
        );
        assert_eq!(
            named_text("accepting the bid of did:plc:bidder", &Names::new()),
            "accepting the bid of did:plc:bidder",
            "unknown, the DID stays"
        );
        let unverified: Names = [(
            "did:plc:bidder".to_owned(),
            Named {
                handle: None,
                pds: Url::parse("http://x").expect("url"),
            },
        )]
        .into();
        assert_eq!(
            named_text("deployed by did:plc:bidder", &unverified),
            "deployed by did:plc:bidder"
        );
    }

    #[test]
    fn a_receipt_is_read_from_its_authors_pds() {
        let uri = "at://did:plc:bidder/com.publicdomainrelay.temp.market.receipt/3lxyz";
        let link = receipt_url(uri, &names("did:plc:bidder", "http://localhost:2583"));
        assert_eq!(
            link.as_deref(),
            Some(
                "http://localhost:2583/xrpc/com.atproto.repo.getRecord?repo=did%3Aplc%3Abidder&collection=com.publicdomainrelay.temp.market.receipt&rkey=3lxyz"
            )
        );
        assert_eq!(
            receipt_url(uri, &Names::new()),
            None,
            "no PDS known, no link"
        );
        assert_eq!(
            receipt_url("not a uri", &names("did:plc:bidder", "http://x")),
            None
        );
    }
}
