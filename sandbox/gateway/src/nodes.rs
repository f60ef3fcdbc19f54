//! A tenant cluster's nodes, the way plan 0031 has them: one Infra per cluster in the
//! **gateway's own** account, named `nodes-<20 hex of sha256(owner/cluster)>`, with one contract
//! entry per node and the label `infra.socialweb.computer/cluster`; each node is a NodeClaim
//! whose status names its Infra entry. [`InfraRecords`] publishes that Infra as a real
//! `computer.socialweb.infra` record on the local PDS (a password session of the gateway
//! account, `putRecord`); the record is rewritten as the cluster moves and ends with a final
//! write (`status.phase` `ended`), never a delete, as SPEC §2 asks of infra records.
//!
//! Invariants: the session token is a [`Secret`]; one expired session is renewed once.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use swdesk_atproto::oauth::Secret;
use tokio::sync::Mutex;
use url::Url;

use crate::config::GatewayAccount;

/// The collection of the Infra records.
pub const COLLECTION: &str = "computer.socialweb.infra";
/// The label naming the tenant cluster an Infra serves.
pub const CLUSTER_LABEL: &str = "infra.socialweb.computer/cluster";

/// Why a record could not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodesError {
    /// The PDS could not be reached.
    #[error("the PDS at {url} could not be reached: {reason}")]
    Unreachable {
        /// Where.
        url: String,
        /// Why.
        reason: String,
    },
    /// The PDS refused.
    #[error("the PDS refused {method}: {status} {body}")]
    Refused {
        /// The method.
        method: &'static str,
        /// The HTTP status.
        status: u16,
        /// Its answer.
        body: String,
    },
}

/// Where a cluster's Infra stands, for its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InfraStage {
    /// Nodes requested, the control plane not serving yet.
    Deploying,
    /// Every node rented and joined.
    Deployed,
    /// The cluster is gone: every node released (the final write).
    Ended,
}

/// One cluster's Infra, as the record says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfraEntry {
    /// The rkey (and the Infra's name).
    pub name: String,
    /// Where the Infra lives: the gateway account's DID.
    pub workspace: String,
    /// The tenant cluster's name.
    pub cluster: String,
    /// The tenant's DID.
    pub owner: String,
    /// One contract entry per node.
    pub contracts: Vec<String>,
    /// When the record was first written.
    pub created_at: String,
}

impl InfraEntry {
    /// The Infra (in the account `workspace`) of `owner`'s cluster `cluster` with `nodes` nodes.
    pub fn new(
        workspace: &str,
        owner: &str,
        cluster: &str,
        nodes: usize,
        created_at: String,
    ) -> Self {
        Self {
            name: infra_name(owner, cluster),
            workspace: workspace.to_owned(),
            cluster: cluster.to_owned(),
            owner: owner.to_owned(),
            contracts: (0..nodes).map(|index| format!("node-{index}")).collect(),
            created_at,
        }
    }

    /// The ComputeContract that runs `contract` (named after the Infra and the entry).
    pub fn compute_contract(&self, contract: &str) -> String {
        format!("{}-{contract}", self.name)
    }

    /// The record at `stage`.
    pub fn record(&self, stage: InfraStage, now: &str) -> Value {
        let (state, contract_phase, phase) = match stage {
            InfraStage::Deploying => ("requested", "requesting", "deploying"),
            InfraStage::Deployed => ("requested", "deployed", "deployed"),
            InfraStage::Ended => ("released", "released", "ended"),
        };
        let contracts: Vec<Value> = self
            .contracts
            .iter()
            .map(|name| json!({"name": name, "state": state, "computeKind": "vm"}))
            .collect();
        // The sandbox gateway provides its simulated nodes itself: it is each node's winner.
        let statuses: Vec<Value> = self
            .contracts
            .iter()
            .map(|name| match stage {
                InfraStage::Deploying => json!({"name": name, "phase": contract_phase,
                    "message": "waiting for the node to join the cluster"}),
                _ => json!({"name": name, "phase": contract_phase, "winner": self.workspace}),
            })
            .collect();
        let mut status = json!({"phase": phase, "contracts": statuses});
        if stage == InfraStage::Ended {
            status["endedAt"] = json!(now);
            status["endReason"] = json!("deleted");
        }
        json!({
            "$type": COLLECTION,
            "description": format!("Nodes of the tenant cluster {} of {} (sandbox gateway).", self.cluster, self.owner),
            "contracts": contracts,
            "status": status,
            "labels": {CLUSTER_LABEL: self.cluster},
            "createdAt": self.created_at,
        })
    }
}

/// `nodes-<20 hex of sha256(owner/cluster)>`: the Infra's name, the cluster key.
pub fn infra_name(owner: &str, cluster: &str) -> String {
    let digest = Sha256::digest(format!("{owner}/{cluster}").as_bytes());
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("nodes-{}", &hex[..20])
}

/// The gateway account's session on its PDS, writing Infra records.
#[derive(Debug)]
pub struct InfraRecords {
    http: reqwest::Client,
    account: GatewayAccount,
    did: String,
    access: Mutex<Secret>,
}

impl InfraRecords {
    /// Signs the gateway account in (`com.atproto.server.createSession`).
    #[allow(
        clippy::disallowed_methods,
        reason = "the sandbox gateway signs in to the sandbox PDS on loopback"
    )]
    pub async fn sign_in(account: &GatewayAccount) -> Result<Self, NodesError> {
        let http = reqwest::Client::new();
        let (did, access) = create_session(&http, account).await?;
        Ok(Self {
            http,
            account: account.clone(),
            did,
            access: Mutex::new(access),
        })
    }

    /// The gateway account's DID.
    pub fn account_did(&self) -> &str {
        &self.did
    }

    /// Writes `entry` at `stage` (`putRecord`), renewing an expired session once.
    pub async fn publish(
        &self,
        entry: &InfraEntry,
        stage: InfraStage,
        now: &str,
    ) -> Result<(), NodesError> {
        let body = json!({
            "repo": self.did,
            "collection": COLLECTION,
            "rkey": entry.name,
            "record": entry.record(stage, now),
        });
        let mut access = self.access.lock().await;
        match self.put_record(&access, &body).await {
            Err(NodesError::Refused {
                status: 400 | 401,
                body: answer,
                ..
            }) if answer.contains("ExpiredToken") => {
                *access = create_session(&self.http, &self.account).await?.1;
                self.put_record(&access, &body).await
            }
            other => other,
        }
    }

    async fn put_record(&self, access: &Secret, body: &Value) -> Result<(), NodesError> {
        let url = xrpc_url(&self.account.pds_url, "com.atproto.repo.putRecord");
        let response = self
            .http
            .post(url.clone())
            .bearer_auth(access.expose())
            .json(body)
            .send()
            .await
            .map_err(|error| unreachable(&url, &error))?;
        refused_unless_ok("com.atproto.repo.putRecord", response)
            .await
            .map(|_| ())
    }
}

async fn create_session(
    http: &reqwest::Client,
    account: &GatewayAccount,
) -> Result<(String, Secret), NodesError> {
    let url = xrpc_url(&account.pds_url, "com.atproto.server.createSession");
    let body = json!({"identifier": account.identifier, "password": account.password.expose()});
    let response = http
        .post(url.clone())
        .json(&body)
        .send()
        .await
        .map_err(|error| unreachable(&url, &error))?;
    let answer = refused_unless_ok("com.atproto.server.createSession", response).await?;
    let did = answer["did"].as_str().unwrap_or_default().to_owned();
    let access = Secret::new(answer["accessJwt"].as_str().unwrap_or_default());
    Ok((did, access))
}

async fn refused_unless_ok(
    method: &'static str,
    response: reqwest::Response,
) -> Result<Value, NodesError> {
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    if !status.is_success() {
        return Err(NodesError::Refused {
            method,
            status: status.as_u16(),
            body,
        });
    }
    Ok(serde_json::from_str(&body).unwrap_or(Value::Null))
}

fn xrpc_url(pds: &Url, nsid: &str) -> Url {
    let mut url = pds.clone();
    url.set_path(&format!("/xrpc/{nsid}"));
    url
}

fn unreachable(url: &Url, error: &reqwest::Error) -> NodesError {
    NodesError::Unreachable {
        url: url.to_string(),
        reason: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clusters_infra_is_named_by_its_key_and_labelled_with_its_cluster() {
        let entry = InfraEntry::new(
            "did:plc:gateway",
            "did:plc:owner",
            "alpha",
            2,
            "2026-12-03T00:00:00Z".into(),
        );
        assert_eq!(entry.name, infra_name("did:plc:owner", "alpha"));
        assert_eq!(entry.name.len(), "nodes-".len() + 20);
        assert_ne!(entry.name, infra_name("did:plc:other", "alpha"));
        let record = entry.record(InfraStage::Deploying, "now");
        assert_eq!(record["labels"][CLUSTER_LABEL], "alpha");
        assert_eq!(record["contracts"].as_array().map(Vec::len), Some(2));
        assert_eq!(record["status"]["contracts"][0]["phase"], "requesting");
        let deployed = entry.record(InfraStage::Deployed, "later");
        assert_eq!(
            deployed["status"]["contracts"][1]["winner"],
            "did:plc:gateway"
        );
        let ended = entry.record(InfraStage::Ended, "later");
        assert_eq!(ended["status"]["phase"], "ended");
        assert_eq!(ended["contracts"][0]["state"], "released");
        assert_eq!(ended["createdAt"], "2026-12-03T00:00:00Z");
    }
}
