//! The bidder's own account on its PDS: a password session (`com.atproto.server.createSession`,
//! fine for a server-side peer), records written with the access JWT
//! (`com.atproto.repo.createRecord`, record keys the PDS picks as TIDs; `putRecord` where the key
//! is given, as for the published attestation key), and service-auth tokens
//! minted for the bidder's own calls to a requester (`com.atproto.server.getServiceAuth`).
//!
//! Invariants: the access token is a [`Secret`], never logged; an expired session is renewed
//! once per call.

use serde_json::{Value, json};
use swdesk_atproto::oauth::Secret;
use swdesk_auction::compute::StrongRef;
use tokio::sync::Mutex;
use url::Url;

use crate::config::BidderAccount;

/// Why a call to the bidder's PDS failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccountError {
    /// The PDS could not be reached.
    #[error("the PDS could not be reached for {method}: {reason}")]
    Unreachable {
        /// The method called.
        method: &'static str,
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

/// The bidder account's session on its PDS.
#[derive(Debug)]
pub struct Account {
    http: reqwest::Client,
    account: BidderAccount,
    did: String,
    access: Mutex<Secret>,
}

impl Account {
    /// Signs the account in.
    pub async fn sign_in(
        http: reqwest::Client,
        account: &BidderAccount,
    ) -> Result<Self, AccountError> {
        let (did, access) = create_session(&http, account).await?;
        Ok(Self {
            http,
            account: account.clone(),
            did,
            access: Mutex::new(access),
        })
    }

    /// The account's DID: the repo of every record the bidder writes.
    pub fn did(&self) -> &str {
        &self.did
    }

    /// Writes `record` (with its `$type`) to `collection`; the PDS picks the record key.
    pub async fn create_record(
        &self,
        collection: &str,
        record: &Value,
    ) -> Result<StrongRef, AccountError> {
        let body = json!({"repo": self.did, "collection": collection, "record": record});
        self.write_record("com.atproto.repo.createRecord", &body)
            .await
    }

    /// Writes `record` (with its `$type`) to `collection` at `rkey`, whatever is there.
    pub async fn put_record(
        &self,
        collection: &str,
        rkey: &str,
        record: &Value,
    ) -> Result<StrongRef, AccountError> {
        let body =
            json!({"repo": self.did, "collection": collection, "rkey": rkey, "record": record});
        self.write_record("com.atproto.repo.putRecord", &body).await
    }

    /// Deletes the record at `rkey` in `collection`.
    pub async fn delete_record(&self, collection: &str, rkey: &str) -> Result<(), AccountError> {
        let method = "com.atproto.repo.deleteRecord";
        let body = json!({"repo": self.did, "collection": collection, "rkey": rkey});
        self.with_session(method, |access| {
            let url = xrpc_url(&self.account.pds_url, method);
            self.http.post(url).bearer_auth(access.expose()).json(&body)
        })
        .await?;
        Ok(())
    }

    async fn write_record(
        &self,
        method: &'static str,
        body: &Value,
    ) -> Result<StrongRef, AccountError> {
        let answer = self
            .with_session(method, |access| {
                let url = xrpc_url(&self.account.pds_url, method);
                self.http.post(url).bearer_auth(access.expose()).json(body)
            })
            .await?;
        Ok(StrongRef {
            uri: text(&answer, "uri"),
            cid: text(&answer, "cid"),
        })
    }

    /// A service-auth token for calling `lxm` at the service `aud`.
    pub async fn service_auth(&self, aud: &str, lxm: &str) -> Result<Secret, AccountError> {
        let answer = self
            .with_session("com.atproto.server.getServiceAuth", |access| {
                let url = xrpc_url(&self.account.pds_url, "com.atproto.server.getServiceAuth");
                self.http
                    .get(url)
                    .query(&[("aud", aud), ("lxm", lxm)])
                    .bearer_auth(access.expose())
            })
            .await?;
        Ok(Secret::new(text(&answer, "token")))
    }

    /// Sends the request `build` makes with the current access token, renewing an expired
    /// session once.
    async fn with_session(
        &self,
        method: &'static str,
        build: impl Fn(&Secret) -> reqwest::RequestBuilder,
    ) -> Result<Value, AccountError> {
        let mut access = self.access.lock().await;
        match send(method, build(&access)).await {
            Err(AccountError::Refused {
                status: 400 | 401,
                body,
                ..
            }) if body.contains("ExpiredToken") => {
                *access = create_session(&self.http, &self.account).await?.1;
                send(method, build(&access)).await
            }
            other => other,
        }
    }
}

/// `com.atproto.server.createSession`: the account's DID and access token.
async fn create_session(
    http: &reqwest::Client,
    account: &BidderAccount,
) -> Result<(String, Secret), AccountError> {
    let url = xrpc_url(&account.pds_url, "com.atproto.server.createSession");
    let body = json!({"identifier": account.identifier, "password": account.password.expose()});
    let answer = send(
        "com.atproto.server.createSession",
        http.post(url).json(&body),
    )
    .await?;
    Ok((
        text(&answer, "did"),
        Secret::new(text(&answer, "accessJwt")),
    ))
}

/// Sends `request` and reads its JSON answer, or names the refusal.
pub(crate) async fn send(
    method: &'static str,
    request: reqwest::RequestBuilder,
) -> Result<Value, AccountError> {
    let response = request
        .send()
        .await
        .map_err(|error| AccountError::Unreachable {
            method,
            reason: error.without_url().to_string(),
        })?;
    let status = response.status().as_u16();
    let body = response.text().await.unwrap_or_default();
    if !(200..300).contains(&status) {
        return Err(AccountError::Refused {
            method,
            status,
            body,
        });
    }
    serde_json::from_str(&body).map_err(|error| AccountError::Refused {
        method,
        status,
        body: format!("an answer that is not JSON: {error}"),
    })
}

/// `<base>/xrpc/<nsid>`.
pub(crate) fn xrpc_url(base: &Url, nsid: &str) -> String {
    format!("{}/xrpc/{nsid}", base.as_str().trim_end_matches('/'))
}

fn text(value: &Value, field: &str) -> String {
    value[field].as_str().unwrap_or_default().to_owned()
}
