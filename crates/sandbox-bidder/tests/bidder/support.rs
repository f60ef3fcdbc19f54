//! The test's requester and helpers: a sandbox PDS shared by the run (`SWDESK_SANDBOX_PDS`),
//! bidders started on it, a requester account that writes signed market records and calls a
//! bidder at the endpoint its `did:web` document names, and polling with a deadline.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use swdesk_atproto::attestation::{AttestationKey, Curve, sign_record};
use swdesk_atproto::identity::{IdentityConfig, Resolver};
use swdesk_atproto::oauth::Secret;
use swdesk_core::auction::request::{lexicon_ref, rfp as rfp_record};
use swdesk_core::compute::StrongRef;
use swdesk_devnet::SandboxPds;
use swdesk_lexicon::Record;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::events::vm::delete;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::vm;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{accept, accepts, event, rfp};
use swdesk_sandbox_bidder::{Behaviour, BidderAccount, Config, RunningBidder};
use url::Url;

/// The sandbox of one test: the shared PDS (or a fresh one) and how identities resolve there.
pub struct Sandbox {
    pub pds: SandboxPds,
    pub identity: IdentityConfig,
}

pub async fn sandbox() -> Sandbox {
    let pds = SandboxPds::from_env_or_start()
        .await
        .expect("the sandbox PDS");
    let identity = IdentityConfig::sandbox(
        Url::parse(&pds.info().plc_url).unwrap(),
        Url::parse(&pds.info().pds_url).unwrap(),
    );
    Sandbox { pds, identity }
}

impl Sandbox {
    /// A bidder with its own fresh account, behaving as told.
    pub async fn bidder(&self, behaviour: Behaviour) -> RunningBidder {
        self.bidder_with(behaviour, 0).await
    }

    /// A bidder whose token clock runs `skew` seconds ahead.
    pub async fn bidder_with(&self, behaviour: Behaviour, skew: i64) -> RunningBidder {
        let account = self.pds.create_account("bidder").await.expect("an account");
        let account = BidderAccount {
            pds_url: Url::parse(&self.pds.info().pds_url).unwrap(),
            identifier: account.did,
            password: Secret::new(account.password),
        };
        let mut config = Config::new(self.identity.clone(), account);
        config.behaviour = behaviour;
        config.boot_step = Duration::from_millis(150);
        config.clock_skew_seconds = skew;
        swdesk_sandbox_bidder::start(config)
            .await
            .expect("the bidder starts")
    }

    /// A signed-in requester account.
    pub async fn requester(&self, prefix: &str) -> Requester {
        let account = self.pds.create_account(prefix).await.expect("an account");
        let http = reqwest::Client::new();
        let pds_url = self.pds.info().pds_url.clone();
        let session: Value = http
            .post(format!("{pds_url}/xrpc/com.atproto.server.createSession"))
            .json(&json!({"identifier": account.did, "password": account.password}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        Requester {
            resolver: Resolver::new(self.identity.clone(), http.clone()),
            http,
            pds_url,
            did: account.did,
            access: Secret::new(session["accessJwt"].as_str().expect("a session")),
            key: AttestationKey::generate(Curve::K256),
        }
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
        let answer: Value = self
            .http
            .post(format!(
                "{}/xrpc/com.atproto.repo.createRecord",
                self.pds_url
            ))
            .bearer_auth(self.access.expose())
            .json(&json!({"repo": self.did, "collection": collection, "record": record}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        StrongRef {
            uri: answer["uri"]
                .as_str()
                .unwrap_or_else(|| panic!("{collection}: {answer}"))
                .to_owned(),
            cid: answer["cid"].as_str().unwrap().to_owned(),
        }
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
        let answer: Value = self
            .http
            .get(format!(
                "{}/xrpc/com.atproto.server.getServiceAuth",
                self.pds_url
            ))
            .query(&[("aud", aud), ("lxm", lxm)])
            .bearer_auth(self.access.expose())
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token: {answer}"))
            .to_owned()
    }

    /// The bidder's market endpoint, from its `did:web` document.
    pub async fn endpoint(&self, bidder_did: &str) -> String {
        let document = self
            .resolver
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
        let answer: Value = self
            .http
            .get(url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let grant = StrongRef {
            uri: answer["uri"]
                .as_str()
                .unwrap_or_else(|| panic!("no grant: {answer}"))
                .to_owned(),
            cid: answer["cid"].as_str().unwrap().to_owned(),
        };
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
    let parts: Vec<&str> = uri.trim_start_matches("at://").split('/').collect();
    let identity = resolver.resolve_did(parts[0]).await.unwrap();
    let answer: Value = reqwest::Client::new()
        .get(format!("{}xrpc/com.atproto.repo.getRecord", identity.pds))
        .query(&[
            ("repo", parts[0]),
            ("collection", parts[1]),
            ("rkey", parts[2]),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    (
        answer["value"].clone(),
        answer["cid"].as_str().unwrap_or_default().to_owned(),
    )
}

/// Every record of `collection` in `repo` (one page is plenty here).
pub async fn list_records(resolver: &Resolver, repo: &str, collection: &str) -> Vec<Value> {
    let identity = resolver.resolve_did(repo).await.unwrap();
    let answer: Value = reqwest::Client::new()
        .get(format!("{}xrpc/com.atproto.repo.listRecords", identity.pds))
        .query(&[("repo", repo), ("collection", collection), ("limit", "100")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["records"].as_array().cloned().unwrap_or_default()
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

/// Polls `probe` every 50 ms until it answers, failing after ten seconds with `what`.
pub async fn eventually<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Asserts that `value` validates as a record of `nsid` under our lexicons.
pub fn assert_valid(nsid: &str, value: &Value) {
    let problems = swdesk_lexicon::validate::validate_record(nsid, value);
    assert_eq!(problems, vec![], "{nsid}: {value}");
}
