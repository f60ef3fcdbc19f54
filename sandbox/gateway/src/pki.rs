//! Each cluster's certificate authority and the kubeconfigs it signs. A kubeconfig carries the
//! CA certificate, the cluster's server URL and a client certificate for the caller (subject CN
//! = the caller's DID, O = `socialweb:owners`, client-auth usage) with its key; no exec plugin,
//! no token. Its lifetime is `ttlSeconds` from now, or unbounded (`99991231235959Z`, RFC 5280's
//! "no well-defined expiration") for `noExpiry`.
//!
//! Invariants: private keys never leave as anything but the kubeconfig's `client-key-data`;
//! `Debug` of a CA shows no key.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use serde::Serialize;
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

    /// A kubeconfig for `user` on the cluster `name` served at `server`.
    pub fn kubeconfig(
        &self,
        name: &str,
        server: &str,
        user: &str,
        lifetime: Lifetime,
    ) -> Result<String, KubeconfigError> {
        let (certificate, key) =
            self.client_certificate(user, lifetime, OffsetDateTime::now_utc())?;
        let config = Kubeconfig::new(name, server, &self.certificate_pem, &certificate, &key);
        // Plain one-line scalars, as kubectl writes them (no folded `>-` blocks).
        let mut options = serde_saphyr::SerializerOptions::default();
        options.prefer_block_scalars = false;
        serde_saphyr::to_string_with_options(&config, options)
            .map_err(|error| KubeconfigError(error.to_string()))
    }
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

/// The kubeconfig file (`clientcmd/v1`), the fields kubectl reads.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct Kubeconfig {
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    kind: &'static str,
    clusters: Vec<Named<ClusterEntry>>,
    users: Vec<Named<UserEntry>>,
    contexts: Vec<Named<ContextEntry>>,
    current_context: String,
}

#[derive(Serialize)]
struct Named<T> {
    name: String,
    #[serde(flatten)]
    entry: T,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct ClusterEntry {
    cluster: ClusterFields,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct ClusterFields {
    server: String,
    certificate_authority_data: String,
}

#[derive(Serialize)]
struct UserEntry {
    user: UserFields,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct UserFields {
    client_certificate_data: String,
    client_key_data: String,
}

#[derive(Serialize)]
struct ContextEntry {
    context: ContextFields,
}

#[derive(Serialize)]
struct ContextFields {
    cluster: String,
    user: String,
}

impl Kubeconfig {
    fn new(name: &str, server: &str, ca: &str, certificate: &str, key: &str) -> Self {
        Self {
            api_version: "v1",
            kind: "Config",
            clusters: vec![Named {
                name: name.to_owned(),
                entry: ClusterEntry {
                    cluster: ClusterFields {
                        server: server.to_owned(),
                        certificate_authority_data: STANDARD.encode(ca),
                    },
                },
            }],
            users: vec![Named {
                name: name.to_owned(),
                entry: UserEntry {
                    user: UserFields {
                        client_certificate_data: STANDARD.encode(certificate),
                        client_key_data: STANDARD.encode(key),
                    },
                },
            }],
            contexts: vec![Named {
                name: name.to_owned(),
                entry: ContextEntry {
                    context: ContextFields {
                        cluster: name.to_owned(),
                        user: name.to_owned(),
                    },
                },
            }],
            current_context: name.to_owned(),
        }
    }
}
