//! The kubeconfig the app writes: rebuilt from the verified fields of the gateway's answer,
//! never copied. [`Minimal::rebuild`] refuses an answer that asks for anything beyond one
//! cluster reached over verified TLS with a client certificate (see `refusals`), verifies the
//! certificate against the cluster's CA and its validity, and writes a fresh kubeconfig of
//! exactly one cluster (server and CA), one user (client certificate and key) and one context,
//! current, under the cluster's name as the owner knows it. [`Parts::to_yaml`] is the one
//! writer of that shape (the sandbox gateway issues its kubeconfigs through it too).
//!
//! Invariant: nothing of the answer reaches the file but the server URL and the three PEM
//! blocks, each re-encoded from what its parser read.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Serialize;
use swdesk_lexicon::Redacted;
use x509_parser::pem::Pem;

use super::error::KubeconfigError;
use super::refusals::refusals;
use super::summary::{Summary, document, read};

/// A kubeconfig rebuilt from a gateway's answer, ready to save, with what the app shows of it.
#[derive(Debug)]
pub struct Minimal {
    /// What the app shows of it.
    pub summary: Summary,
    text: Redacted<String>,
}

impl Minimal {
    /// Reads the gateway's `answer` for the cluster `name` and rebuilds it, at `now` (Unix
    /// seconds): refused, naming every reason, when it asks for what the app never writes;
    /// refused when its certificate is not the CA's or expired.
    pub fn rebuild(answer: &str, name: &str, now: i64) -> Result<Self, KubeconfigError> {
        let document = document(answer)?;
        let problems = refusals(&document);
        if !problems.is_empty() {
            return Err(KubeconfigError::Refused(problems));
        }
        let (mut summary, credentials) = read(&document)?;
        if summary.not_after <= now {
            return Err(KubeconfigError::Expired(summary.not_after));
        }
        let text = Parts {
            name,
            server: &summary.server,
            authority_pem: &pem_text(&credentials.authority),
            certificate_pem: &pem_text(&credentials.certificate),
            key_pem: &pem_text(&credentials.key),
        }
        .to_yaml()?;
        name.clone_into(&mut summary.cluster);
        Ok(Self { summary, text })
    }

    /// The kubeconfig's text (it holds the client key).
    pub fn text(&self) -> &Redacted<String> {
        &self.text
    }
}

/// What a kubeconfig of one cluster reached with a client certificate is made of.
pub struct Parts<'a> {
    /// The cluster's name, also its user's and its context's.
    pub name: &'a str,
    /// The API server URL.
    pub server: &'a str,
    /// The cluster CA's certificate, PEM.
    pub authority_pem: &'a str,
    /// The client certificate, PEM.
    pub certificate_pem: &'a str,
    /// The client key, PEM.
    pub key_pem: &'a str,
}

impl std::fmt::Debug for Parts<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Parts")
            .field("name", &self.name)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl Parts<'_> {
    /// The kubeconfig (`clientcmd/v1`) of these parts, as kubectl writes one: plain one-line
    /// scalars, one cluster, one user, one context, current.
    pub fn to_yaml(&self) -> Result<Redacted<String>, KubeconfigError> {
        let file = File {
            api_version: "v1",
            kind: "Config",
            clusters: [Named::new(
                self.name,
                ClusterEntry {
                    cluster: ClusterFields {
                        server: self.server,
                        certificate_authority_data: STANDARD.encode(self.authority_pem),
                    },
                },
            )],
            users: [Named::new(
                self.name,
                UserEntry {
                    user: UserFields {
                        client_certificate_data: STANDARD.encode(self.certificate_pem),
                        client_key_data: STANDARD.encode(self.key_pem),
                    },
                },
            )],
            contexts: [Named::new(
                self.name,
                ContextEntry {
                    context: ContextFields {
                        cluster: self.name,
                        user: self.name,
                    },
                },
            )],
            current_context: self.name,
        };
        let mut options = serde_saphyr::SerializerOptions::default();
        options.prefer_block_scalars = false;
        serde_saphyr::to_string_with_options(&file, options)
            .map(Redacted::new)
            .map_err(|_| KubeconfigError::Yaml("it could not be written".to_owned()))
    }
}

/// A PEM block as text, from what its parser read: the label and the base64 of its contents
/// in lines of 64.
fn pem_text(pem: &Pem) -> String {
    let body = STANDARD.encode(&pem.contents);
    let mut text = format!("-----BEGIN {}-----\n", pem.label);
    for line in body.as_bytes().chunks(64) {
        text.push_str(&String::from_utf8_lossy(line));
        text.push('\n');
    }
    text.push_str(&format!("-----END {}-----\n", pem.label));
    text
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct File<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    kind: &'static str,
    clusters: [Named<'a, ClusterEntry<'a>>; 1],
    users: [Named<'a, UserEntry>; 1],
    contexts: [Named<'a, ContextEntry<'a>>; 1],
    current_context: &'a str,
}

#[derive(Serialize)]
struct Named<'a, T> {
    name: &'a str,
    #[serde(flatten)]
    entry: T,
}

impl<'a, T> Named<'a, T> {
    fn new(name: &'a str, entry: T) -> Self {
        Self { name, entry }
    }
}

#[derive(Serialize)]
struct ClusterEntry<'a> {
    cluster: ClusterFields<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct ClusterFields<'a> {
    server: &'a str,
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
struct ContextEntry<'a> {
    context: ContextFields<'a>,
}

#[derive(Serialize)]
struct ContextFields<'a> {
    cluster: &'a str,
    user: &'a str,
}
