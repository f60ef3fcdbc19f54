//! What a contract asks the market for: the mapping from a declared contract (`#contract` of
//! the deployment record) to the requester's records — the `compute.vm` payload, the
//! fulfillment policy record, the `market.rfp` envelope — and to the auction's local knobs
//! (`bidWindowSec`, `firstFree`) and bidder lists.
//!
//! Rules (issue 8, `market.md`):
//! - `computeKind` must be `vm` (the market has no public payload for `deno` yet);
//! - `cpus`, `mem`, `disk`, `network`, `role` are not `#contract` fields: they are read from the
//!   contract's unknown fields when a newer client wrote them, else the defaults below;
//!   `user_data` is `userData` (empty when absent) with the contract's `sshAuthorizedKeys`
//!   added as cloud-init installs them, and fields `compute.vm` cannot carry are refused
//!   ([`super::carriage`]);
//! - `policy` names the fulfillment policy: absent means an open request (no policy record),
//!   `only_me` and `direct_network` build their public record (`vouchNsid`, `maxDepth` from
//!   `policyArgs`), any other name is refused;
//! - `policyArgs.bidWindowSec` is an integer of 1..=3600 seconds (default 30),
//!   `policyArgs.firstFree` a boolean (default false).
//!
//! Invariants: [`plan`] names every problem of a contract at once, each with its JSON Pointer
//! from the contract; records come out unsigned (`signatures` empty): the adapter attaches the
//! requester's inline signature before writing them.

use std::time::Duration;

use serde_json::{Map, Value, json};
use swdesk_lexicon::Problem;
use swdesk_lexicon::com::atproto::repo::strong_ref;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::vm::Vm;
use swdesk_lexicon::com::publicdomainrelay::temp::market::rfp::Rfp;
use swdesk_lexicon::computer::socialweb::infra::{ContractComputeKind, ContractState};

use crate::compute::phase::StrongRef;
use swdesk_lexicon::computer::socialweb::infra::Contract;

/// vCPUs when the contract names none.
pub const DEFAULT_CPUS: i64 = 1;
/// Memory when the contract names none.
pub const DEFAULT_MEM: &str = "1G";
/// Disk when the contract names none.
pub const DEFAULT_DISK: &str = "10G";
/// Network quota when the contract names none.
pub const DEFAULT_NETWORK: &str = "10G";
/// RBAC role of the guest when the contract names none.
pub const DEFAULT_ROLE: &str = "default";
/// How long bids are collected when `policyArgs.bidWindowSec` is absent.
pub const DEFAULT_BID_WINDOW: Duration = Duration::from_secs(30);
/// The longest bid window a contract may ask for.
pub const MAX_BID_WINDOW_SECS: i64 = 3600;
/// The vouch collection `direct_network` walks when `policyArgs.vouchNsid` is absent.
pub const DEFAULT_VOUCH_NSID: &str = "sh.tangled.graph.vouch";

/// Collection of the `only_me` fulfillment policy (not a valid atproto NSID: see the report).
pub const ONLY_ME_NSID: &str = "com.publicdomainrelay.temp.market.policies.only_me";
/// Collection of the `direct_network` fulfillment policy (not a valid atproto NSID either).
pub const DIRECT_NETWORK_NSID: &str = "com.publicdomainrelay.temp.market.policies.direct_network";

/// How bids are collected: the requester's own knobs, never written to a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bidding {
    /// How long the window stays open after the RFP is sent.
    pub window: Duration,
    /// The first allowed free bid wins at once.
    pub first_free: bool,
}

/// A fulfillment policy the RFP carries: who may bid and fulfill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FulfillmentPolicy {
    /// Only bidders the requester operates.
    OnlyMe,
    /// Only bidders in the requester's vouch network.
    DirectNetwork {
        /// The vouch collection walked.
        vouch_nsid: String,
        /// How deep; 1 = direct vouches only.
        max_depth: i64,
    },
}

impl FulfillmentPolicy {
    /// The policy record's collection.
    pub fn collection(&self) -> &'static str {
        match self {
            Self::OnlyMe => ONLY_ME_NSID,
            Self::DirectNetwork { .. } => DIRECT_NETWORK_NSID,
        }
    }

    /// The unsigned policy record of `requester_did`, with its `$type`.
    pub fn record(&self, requester_did: &str) -> Value {
        let mut record = json!({"$type": self.collection(), "requesterDid": requester_did});
        if let Self::DirectNetwork {
            vouch_nsid,
            max_depth,
        } = self
        {
            record["vouchNsid"] = json!(vouch_nsid);
            record["maxDepth"] = json!(max_depth);
        }
        record["signatures"] = json!([]);
        record
    }
}

/// Everything the requester needs to open the auction of one contract.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestPlan {
    /// The payload record.
    pub vm: Vm,
    /// The fulfillment policy, if the RFP carries one.
    pub policy: Option<FulfillmentPolicy>,
    /// The bid window and `firstFree`.
    pub bidding: Bidding,
    /// Bidders asked explicitly, in declaration order.
    pub bidder_dids: Vec<String>,
    /// Bidders never asked and whose bids are ignored.
    pub deny_bidder_dids: Vec<String>,
}

/// The plan of `contract`, or every problem that prevents it.
pub fn plan(contract: &Contract) -> Result<RequestPlan, Vec<Problem>> {
    let mut problems = Vec::new();
    check_compute_kind(contract, &mut problems);
    problems.extend(super::carriage::not_carried(contract));
    let vm = vm_payload(contract, &mut problems);
    let args = contract.policy_args.clone().unwrap_or_default();
    let policy = fulfillment_policy(contract.policy.as_deref(), &args, &mut problems);
    let bidding = bidding(&args, &mut problems);
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(RequestPlan {
        vm,
        policy,
        bidding,
        bidder_dids: contract.bidder_dids.clone().unwrap_or_default(),
        deny_bidder_dids: contract.deny_bidder_dids.clone().unwrap_or_default(),
    })
}

/// Every problem of the `requested` contracts among `contracts`, each under
/// `/spec/contracts/<index>`: what the market would refuse is refused when the owner declares
/// or requests, not minutes later when the request fails.
pub fn requested_problems(contracts: &[Contract]) -> Vec<Problem> {
    contracts
        .iter()
        .enumerate()
        .filter(|(_, contract)| contract.state == ContractState::Requested)
        .flat_map(|(index, contract)| request_problems(index, contract))
        .collect()
}

/// Every problem of requesting `contract`, the declaration's contract number `index`, each
/// under `/spec/contracts/<index>`.
pub fn request_problems(index: usize, contract: &Contract) -> Vec<Problem> {
    let problems = plan(contract).err().unwrap_or_default();
    Problem::under(&format!("/spec/contracts/{index}"), problems)
}

/// The unsigned RFP around `payload`, with its policy and `submitBid` service if any.
pub fn rfp(payload: &StrongRef, policy: Option<&StrongRef>, submit_bid: Option<&str>) -> Rfp {
    Rfp {
        payload: lexicon_ref(payload),
        policy: policy.map(lexicon_ref),
        submit_bid: submit_bid.map(str::to_owned),
        signatures: Vec::new(),
        extra: Map::new(),
    }
}

/// The lexicon's strong reference of a domain one.
pub fn lexicon_ref(reference: &StrongRef) -> strong_ref::StrongRef {
    strong_ref::StrongRef {
        uri: reference.uri.clone(),
        cid: reference.cid.clone(),
        extra: Map::new(),
    }
}

/// The domain's strong reference of a lexicon one (unknown fields dropped).
pub fn domain_ref(reference: &strong_ref::StrongRef) -> StrongRef {
    StrongRef {
        uri: reference.uri.clone(),
        cid: reference.cid.clone(),
    }
}

fn check_compute_kind(contract: &Contract, problems: &mut Vec<Problem>) {
    let kind = contract.compute_kind_or_default();
    if kind != ContractComputeKind::Vm {
        problems.push(Problem::new(
            "/computeKind",
            format!(
                "computeKind {:?} has no payload on the compute market yet; only \"vm\" is rented.",
                kind.as_str()
            ),
            "Set computeKind to \"vm\".",
        ));
    }
}

fn vm_payload(contract: &Contract, problems: &mut Vec<Problem>) -> Vm {
    let extra = &contract.extra;
    let cpus = match extra.get("cpus") {
        None => DEFAULT_CPUS,
        Some(value) => value.as_i64().filter(|cpus| *cpus >= 1).unwrap_or_else(|| {
            problems.push(Problem::new(
                "/cpus",
                format!("cpus is {value}, not a whole number of at least 1."),
                "Give cpus as an integer of at least 1, or remove it for 1.",
            ));
            DEFAULT_CPUS
        }),
    };
    Vm {
        cpus,
        mem: size_field(extra, "mem", DEFAULT_MEM, problems),
        disk: size_field(extra, "disk", DEFAULT_DISK, problems),
        network: size_field(extra, "network", DEFAULT_NETWORK, problems),
        role: size_field(extra, "role", DEFAULT_ROLE, problems),
        user_data: super::carriage::user_data(contract, problems),
        location: None,
        extra: Map::new(),
    }
}

fn size_field(
    extra: &Map<String, Value>,
    name: &str,
    default: &str,
    problems: &mut Vec<Problem>,
) -> String {
    match extra.get(name) {
        None => default.to_owned(),
        Some(Value::String(text)) if !text.is_empty() => text.clone(),
        Some(value) => {
            problems.push(Problem::new(
                format!("/{name}"),
                format!("{name} is {value}, not a non-empty string."),
                format!(
                    "Give {name} as a string such as {default:?}, or remove it for {default:?}."
                ),
            ));
            default.to_owned()
        }
    }
}

fn fulfillment_policy(
    name: Option<&str>,
    args: &Map<String, Value>,
    problems: &mut Vec<Problem>,
) -> Option<FulfillmentPolicy> {
    match name {
        None => None,
        Some("only_me") => Some(FulfillmentPolicy::OnlyMe),
        Some("direct_network") => Some(direct_network(args, problems)),
        Some(other) => {
            problems.push(Problem::new(
                "/policy",
                format!("Policy {other:?} is not one the requester can write."),
                "Use \"only_me\" or \"direct_network\", or remove policy for an open request.",
            ));
            None
        }
    }
}

fn direct_network(args: &Map<String, Value>, problems: &mut Vec<Problem>) -> FulfillmentPolicy {
    let vouch_nsid = match args.get("vouchNsid") {
        None => DEFAULT_VOUCH_NSID.to_owned(),
        Some(Value::String(nsid)) if swdesk_lexicon::syntax::nsid(nsid).is_ok() => nsid.clone(),
        Some(value) => {
            problems.push(Problem::new(
                "/policyArgs/vouchNsid",
                format!("vouchNsid is {value}, not an NSID."),
                format!("Give an NSID such as {DEFAULT_VOUCH_NSID:?}."),
            ));
            DEFAULT_VOUCH_NSID.to_owned()
        }
    };
    let max_depth = integer_arg(args, "maxDepth", 1, 1..=8, problems);
    FulfillmentPolicy::DirectNetwork {
        vouch_nsid,
        max_depth,
    }
}

fn bidding(args: &Map<String, Value>, problems: &mut Vec<Problem>) -> Bidding {
    let default_secs = i64::try_from(DEFAULT_BID_WINDOW.as_secs()).unwrap_or(30);
    let secs = integer_arg(
        args,
        "bidWindowSec",
        default_secs,
        1..=MAX_BID_WINDOW_SECS,
        problems,
    );
    let first_free = match args.get("firstFree") {
        None => false,
        Some(Value::Bool(flag)) => *flag,
        Some(value) => {
            problems.push(Problem::new(
                "/policyArgs/firstFree",
                format!("firstFree is {value}, not a boolean."),
                "Give firstFree as true or false.",
            ));
            false
        }
    };
    Bidding {
        window: Duration::from_secs(secs.unsigned_abs()),
        first_free,
    }
}

fn integer_arg(
    args: &Map<String, Value>,
    name: &str,
    default: i64,
    range: std::ops::RangeInclusive<i64>,
    problems: &mut Vec<Problem>,
) -> i64 {
    let Some(value) = args.get(name) else {
        return default;
    };
    match value.as_i64().filter(|n| range.contains(n)) {
        Some(n) => n,
        None => {
            let (low, high) = (range.start(), range.end());
            problems.push(Problem::new(
                format!("/policyArgs/{name}"),
                format!("{name} is {value}, not an integer from {low} to {high}."),
                format!(
                    "Give {name} as an integer from {low} to {high}, or remove it for {default}."
                ),
            ));
            default
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swdesk_lexicon::Record;

    fn contract(fields: Value) -> Contract {
        let mut value = json!({"name": "web", "state": "requested"});
        if let (Value::Object(base), Value::Object(more)) = (&mut value, fields) {
            base.extend(more);
        }
        serde_json::from_value(value).expect("a contract")
    }

    #[test]
    fn a_bare_contract_asks_for_a_default_vm_in_an_open_30_second_auction() {
        let plan = plan(&contract(json!({}))).expect("plans");
        assert_eq!(plan.vm.cpus, DEFAULT_CPUS);
        assert_eq!(
            (plan.vm.mem.as_str(), plan.vm.disk.as_str()),
            (DEFAULT_MEM, DEFAULT_DISK)
        );
        assert_eq!(plan.vm.user_data, "");
        assert_eq!(plan.policy, None);
        assert_eq!(
            plan.bidding,
            Bidding {
                window: Duration::from_secs(30),
                first_free: false
            }
        );
    }

    #[test]
    fn the_contract_fields_reach_the_payload_the_policy_and_the_bidding() {
        let plan = plan(&contract(json!({
            "userData": "#cloud-config\n", "cpus": 4, "mem": "8G", "disk": "40G",
            "bidderDids": ["did:plc:a"], "denyBidderDids": ["did:plc:b"],
            "policy": "direct_network",
            "policyArgs": {"bidWindowSec": 5, "firstFree": true, "maxDepth": 2}
        })))
        .expect("plans");
        assert_eq!((plan.vm.cpus, plan.vm.mem.as_str()), (4, "8G"));
        assert_eq!(plan.vm.user_data, "#cloud-config\n");
        assert_eq!(plan.bidding.window, Duration::from_secs(5));
        assert!(plan.bidding.first_free);
        assert_eq!(
            plan.policy,
            Some(FulfillmentPolicy::DirectNetwork {
                vouch_nsid: DEFAULT_VOUCH_NSID.to_owned(),
                max_depth: 2
            })
        );
        assert_eq!(plan.bidder_dids, ["did:plc:a"]);
        assert_eq!(plan.deny_bidder_dids, ["did:plc:b"]);
    }

    #[test]
    fn only_requested_contracts_are_checked_and_each_problem_names_its_contract() {
        let staged = contract(json!({"computeKind": "deno", "state": "staged"}));
        let requested =
            contract(json!({"computeKind": "deno", "tunnels": [{"tag": "a", "port": 1}]}));
        let problems = requested_problems(&[staged, requested]);
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            ["/spec/contracts/1/computeKind", "/spec/contracts/1/tunnels"]
        );
    }

    #[test]
    fn every_problem_of_a_contract_is_named_at_once() {
        let problems = plan(&contract(json!({
            "computeKind": "deno", "cpus": 0, "mem": 4,
            "policy": "everyone",
            "policyArgs": {"bidWindowSec": 0, "firstFree": "yes"}
        })))
        .expect_err("refused");
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/computeKind",
                "/cpus",
                "/mem",
                "/policy",
                "/policyArgs/bidWindowSec",
                "/policyArgs/firstFree"
            ]
        );
    }

    #[test]
    fn the_payload_and_the_rfp_validate_against_the_lexicons() {
        let plan = plan(&contract(json!({"userData": "x"}))).expect("plans");
        let vm = plan.vm.to_record_value().expect("vm");
        assert_eq!(
            swdesk_lexicon::validate::validate_record(
                swdesk_lexicon::com::publicdomainrelay::temp::compute::vm::NSID,
                &vm
            ),
            vec![]
        );
        let payload = StrongRef {
            uri: "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/com.publicdomainrelay.temp.compute.vm/3lbjpbyznfc2a".into(),
            cid: "bafyreiclp443lavogvhj3d2ob2cxbfuscni2k5jk7bebjzg7khl3esabwq".into(),
        };
        let rfp = rfp(&payload, None, Some("did:web:desk.example.com#temp_market"));
        let value = rfp.to_record_value().expect("rfp");
        assert_eq!(value["payload"]["uri"], json!(payload.uri));
        assert_eq!(
            swdesk_lexicon::validate::validate_record(Rfp::NSID, &value),
            vec![]
        );
    }

    #[test]
    fn policy_records_carry_the_requester_and_the_walk() {
        let policy = FulfillmentPolicy::DirectNetwork {
            vouch_nsid: "sh.tangled.graph.vouch".into(),
            max_depth: 1,
        };
        assert_eq!(
            policy.record("did:plc:me"),
            json!({"$type": DIRECT_NETWORK_NSID, "requesterDid": "did:plc:me",
                   "vouchNsid": "sh.tangled.graph.vouch", "maxDepth": 1, "signatures": []})
        );
        assert_eq!(
            FulfillmentPolicy::OnlyMe.record("did:plc:me"),
            json!({"$type": ONLY_ME_NSID, "requesterDid": "did:plc:me", "signatures": []})
        );
    }
}
