//! The test's requester and helpers beyond the test kit (the sandbox, public reads, waiting with
//! a deadline): bidders started on the sandbox, and a requester account that writes signed
//! market records and calls a bidder at the endpoint its `did:web` document names.

use std::time::Duration;

use reqwest::RequestBuilder;
use serde_json::{Value, json};
use swdesk_atproto::attestation::{AttestationKey, Curve, sign_record};
use swdesk_atproto::identity::{Resolver, loopback_web_did_port};
use swdesk_atproto::oauth::Secret;
use swdesk_auction::compute::StrongRef;
use swdesk_auction::request::{lexicon_ref, rfp as rfp_record};
use swdesk_lexicon::Record;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::events::vm::delete;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::vm;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{
    accept, accepts, badge_blue_key, event, rfp,
};
use swdesk_lexicon::computer::socialweb::secret::sealed;
use swdesk_sandbox_bidder::{Behaviour, RunningBidder};

/// The sandbox of one test: the shared PDS (or a fresh one) and how identities resolve there.
pub struct Sandbox {
    pub kit: swdesk_testkit::Sandbox,
}

pub async fn sandbox() -> Sandbox {
    Sandbox {
        kit: swdesk_testkit::Sandbox::start().await,
    }
}

impl Sandbox {
    /// A bidder with its own fresh account, behaving as told.
    pub async fn bidder(&self, behaviour: Behaviour) -> RunningBidder {
        self.bidder_with(behaviour, 0).await
    }

    /// A bidder whose token clock runs `skew` seconds ahead.
    pub async fn bidder_with(&self, behaviour: Behaviour, skew: i64) -> RunningBidder {
        let mut config = self.kit.bidder_config("bidder", behaviour).await;
        config.boot_step = Duration::from_millis(150);
        config.clock_skew_seconds = skew;
        swdesk_sandbox_bidder::start(config)
            .await
            .expect("the bidder starts")
    }

    /// A signed-in requester account.
    pub async fn requester(&self, prefix: &str) -> Requester {
        let account = self.kit.account(prefix).await;
        let http = reqwest::Client::new();
        let pds_url = self.kit.pds.info().pds_url.clone();
        let session = json_of(
            http.post(format!("{pds_url}/xrpc/com.atproto.server.createSession"))
                .json(&json!({"identifier": account.did, "password": account.password})),
        )
        .await;
        let requester = Requester {
            resolver: self.kit.resolver_reaching(&[]),
            http,
            pds_url,
            did: account.did,
            access: Secret::new(session["accessJwt"].as_str().expect("a session")),
            key: AttestationKey::generate(Curve::K256),
        };
        requester.publish_key().await;
        requester
    }
}

/// An XRPC answer: status and body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
}

impl Answer {
    pub fn error(&self) -> &str {
        self.body["error"].as_str().unwrap_or_default()
    }
}

/// The requester: an account on the PDS that writes records and calls bidders.
pub struct Requester {
    pub did: String,
    pub key: AttestationKey,
    pub resolver: Resolver,
    http: reqwest::Client,
    pds_url: String,
    access: Secret,
}

impl Requester {
    /// `createRecord` of `record` as is.
    pub async fn create(&self, collection: &str, record: &Value) -> StrongRef {
        let body = json!({"repo": self.did, "collection": collection, "record": record});
        let request = self.pds_call(self.http.post(self.xrpc("com.atproto.repo.createRecord")));
        strong_ref_of(&json_of(request.json(&body)).await, collection)
    }

    /// Publishes the requester's attestation key (`market.badgeBlueKey` keyed by its did:key).
    pub async fn publish_key(&self) {
        let did_key = self.key.did_key();
        let record = json!({"$type": badge_blue_key::NSID, "key": did_key,
            "createdAt": "2026-12-03T11:00:00.000Z"});
        let body = json!({"repo": self.did, "collection": badge_blue_key::NSID, "rkey": did_key,
            "record": record});
        let request = self.pds_call(self.http.post(self.xrpc("com.atproto.repo.putRecord")));
        strong_ref_of(&json_of(request.json(&body)).await, badge_blue_key::NSID);
    }

    /// `record` signed with the requester's attestation key, written; with the value written.
    pub async fn signed(&self, collection: &str, record: &Value) -> (StrongRef, Value) {
        let signed = sign_record(record, &self.key, &self.did, "2026-12-03T11:00:00.000Z").unwrap();
        (self.create(collection, &signed).await, signed)
    }

    /// An open RFP for a small VM.
    pub async fn rfp(&self) -> StrongRef {
        self.rfp_with(None).await
    }

    /// An open RFP for a small VM whose bids go to `submit_bid` (a service reference).
    pub async fn rfp_with(&self, submit_bid: Option<&str>) -> StrongRef {
        let vm = json!({"$type": vm::NSID, "cpus": 1, "mem": "512M", "disk": "10G", "network": "500G",
            "role": "sandbox", "user_data": "#cloud-config\n"});
        let vm = self.create(vm::NSID, &vm).await;
        let record = rfp_record(&vm, None, submit_bid).to_record_value().unwrap();
        self.signed(rfp::NSID, &record).await.0
    }

    /// A service-auth token from the requester's PDS for `lxm` at `aud`.
    pub async fn token(&self, aud: &str, lxm: &str) -> String {
        let request = self.pds_call(
            self.http
                .get(self.xrpc("com.atproto.server.getServiceAuth")),
        );
        let answer = json_of(request.query(&[("aud", aud), ("lxm", lxm)])).await;
        answer["token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token: {answer}"))
            .to_owned()
    }

    /// The bidder's market endpoint, from its `did:web` document (the bidder's port added to
    /// the sandbox's network policy, as the owner's configuration names its bidders).
    pub async fn endpoint(&self, bidder_did: &str) -> String {
        let port = loopback_web_did_port(bidder_did).expect("a sandbox bidder's did:web");
        let config = self.resolver.config().clone();
        let policy = config.net_policy().with_loopback_port(port);
        let document = Resolver::new(config, swdesk_net::Outbound::new(policy))
            .did_document(bidder_did)
            .await
            .expect("the bidder's document");
        document
            .service
            .iter()
            .find(|service| service.id == "#temp_market")
            .and_then(|service| service.service_endpoint.as_str())
            .expect("a #temp_market service")
            .to_owned()
    }

    /// Calls `nsid` at `bidder` with a token the requester's PDS minted for it.
    pub async fn call(&self, bidder: &RunningBidder, nsid: &str, body: &Value) -> Answer {
        let token = self.token(&bidder.did, nsid).await;
        self.call_with(bidder, nsid, Some(&token), body).await
    }

    /// Calls `nsid` at `bidder` with `token` as it is.
    pub async fn call_with(
        &self,
        bidder: &RunningBidder,
        nsid: &str,
        token: Option<&str>,
        body: &Value,
    ) -> Answer {
        let endpoint = self.endpoint(&bidder.did).await;
        let mut request = self.http.post(format!("{endpoint}/xrpc/{nsid}")).json(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        Answer {
            status,
            body: response.json().await.unwrap_or(Value::Null),
        }
    }

    /// The grant for an `accepts.free` of `bid` (whose terms are `terms`), from the terms' `url`.
    pub async fn settle_free(
        &self,
        bid: &StrongRef,
        terms_url: &str,
        terms: &StrongRef,
    ) -> (StrongRef, Value, StrongRef) {
        let record = json!({"$type": accepts::free::NSID, "bid": strong(bid), "payload": strong(terms), "signatures": []});
        let (accepts_free, written) = self.signed(accepts::free::NSID, &record).await;
        let url = format!(
            "{terms_url}/{}/{}",
            encode(&accepts_free.uri),
            accepts_free.cid
        );
        let grant = strong_ref_of(&json_of(self.http.get(url)).await, "the grant");
        (accepts_free, written, grant)
    }

    /// The signed accept of `bid` on `rfp`, settled by `grant`; with the value written.
    pub async fn accept(
        &self,
        rfp: &StrongRef,
        bid: &StrongRef,
        grant: &StrongRef,
    ) -> (StrongRef, Value) {
        self.accept_with(rfp, bid, grant, None).await
    }

    /// The same, naming the requester's `submitEvent` service.
    pub async fn accept_with(
        &self,
        rfp: &StrongRef,
        bid: &StrongRef,
        grant: &StrongRef,
        submit_event: Option<&str>,
    ) -> (StrongRef, Value) {
        let mut record = json!({"$type": accept::NSID, "rfp": strong(rfp), "bid": strong(bid), "payload": strong(grant), "signatures": []});
        if let Some(service) = submit_event {
            record["submitEvent"] = json!(service);
        }
        self.signed(accept::NSID, &record).await
    }

    /// The address of `nsid` on the requester's PDS.
    fn xrpc(&self, nsid: &str) -> String {
        format!("{}/xrpc/{nsid}", self.pds_url)
    }

    /// `request` authorized by the requester's session.
    fn pds_call(&self, request: RequestBuilder) -> RequestBuilder {
        request.bearer_auth(self.access.expose())
    }

    /// `value` sealed to `recipient` for the guest of `receipt` as `db-password` version 1, and
    /// the signed `market.event` carrying it.
    pub async fn sealed_event(
        &self,
        receipt: &StrongRef,
        recipient: &str,
        value: &[u8],
    ) -> (StrongRef, Value) {
        let to: age::x25519::Recipient = recipient.parse().unwrap();
        let ciphertext = age::encrypt(&to, value).unwrap();
        let sealed = json!({
            "$type": sealed::NSID,
            "receipt": strong(receipt),
            "recipient": recipient,
            "name": "db-password",
            "version": 1,
            "ciphertext": swdesk_lexicon::Bytes(ciphertext),
            "createdAt": "2026-12-05T11:00:00.000Z",
        });
        let sealed = self.create(sealed::NSID, &sealed).await;
        let record = json!({"$type": event::NSID, "receipt": strong(receipt), "payload": strong(&sealed), "signatures": []});
        self.signed(event::NSID, &record).await
    }

    /// The release of `receipt`: a `vm.delete` and the signed `market.event` carrying it.
    pub async fn release_event(&self, receipt: &StrongRef) -> (StrongRef, Value) {
        let delete = json!({"$type": delete::NSID, "reason": "released", "createdAt": "2026-12-03T11:00:00.000Z"});
        let delete = self.create(delete::NSID, &delete).await;
        let record = json!({"$type": event::NSID, "receipt": strong(receipt), "payload": strong(&delete), "signatures": []});
        self.signed(event::NSID, &record).await
    }
}

/// A record from its author's PDS (`getRecord`), the value and its cid.
pub async fn get_record(resolver: &Resolver, uri: &str) -> (Value, String) {
    swdesk_testkit::public::record(resolver, uri)
        .await
        .unwrap_or_else(|| panic!("{uri} is in its repo"))
}

pub use swdesk_testkit::public::records as list_records;

/// The JSON answer of `request`.
async fn json_of(request: RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// The strong reference `{uri, cid}` in `answer`, failing with `what` when there is none.
fn strong_ref_of(answer: &Value, what: &str) -> StrongRef {
    let field = |name: &str| answer[name].as_str().map(str::to_owned);
    match (field("uri"), field("cid")) {
        (Some(uri), Some(cid)) => StrongRef { uri, cid },
        _ => panic!("no strong reference for {what}: {answer}"),
    }
}

/// A strong reference as record JSON.
pub fn strong(reference: &StrongRef) -> Value {
    serde_json::to_value(lexicon_ref(reference)).unwrap()
}

/// The at-uri percent-encoded as one path segment.
fn encode(uri: &str) -> String {
    uri.replace('%', "%25")
        .replace(':', "%3A")
        .replace('/', "%2F")
}

/// Polls `probe` until it answers, failing after ten seconds with `what`.
pub async fn eventually<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    swdesk_testkit::eventually(what, Duration::from_secs(10), async || probe()).await
}

/// Asserts that `value` validates as a record of `nsid` under our lexicons.
pub fn assert_valid(nsid: &str, value: &Value) {
    let problems = swdesk_lexicon::validate::validate_record(nsid, value);
    assert_eq!(problems, vec![], "{nsid}: {value}");
}
