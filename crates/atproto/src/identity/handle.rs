//! Handle → DID, by the methods the network is configured with, tried in order: DNS TXT
//! (`_atproto.<handle>` = `did=<did>`), HTTPS (`https://<handle>/.well-known/atproto-did`),
//! or an XRPC service's `com.atproto.identity.resolveHandle` (the sandbox's PDS). The first
//! method that yields a well-formed DID wins; when none does, the error lists what each said.
//! Every answer is read by one rule, [`did_of_answer`]: what a peer said is quoted back only cut
//! to one line of at most `QUOTED_MAX` bytes, without controls or bidi characters.

use swdesk_net::{Limit, Outbound, read_bytes, read_json};
use url::Url;

use super::{HOP_TIMEOUT, IdentityError};

/// One way of resolving a handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandleMethod {
    /// A DNS TXT record at `_atproto.<handle>`.
    Dns,
    /// `https://<handle>/.well-known/atproto-did`.
    WellKnown,
    /// `com.atproto.identity.resolveHandle` at this service.
    Xrpc(Url),
}

/// The DID `handle` resolves to.
pub(super) async fn resolve(
    http: &Outbound,
    methods: &[HandleMethod],
    handle: &str,
) -> Result<String, IdentityError> {
    let mut tried = Vec::new();
    for method in methods {
        let answer = match method {
            HandleMethod::Dns => by_dns(handle).await,
            HandleMethod::WellKnown => by_well_known(http, handle).await,
            HandleMethod::Xrpc(service) => by_xrpc(http, service, handle).await,
        };
        match answer.and_then(|answer| did_of_answer(&answer)) {
            Ok(did) => return Ok(did),
            Err(reason) => tried.push(reason),
        }
    }
    Err(IdentityError::HandleNotFound {
        handle: handle.to_owned(),
        tried,
    })
}

/// The most bytes of a method's answer quoted back in why it did not resolve.
const QUOTED_MAX: usize = 120;

/// What one method of resolving a handle answered, as it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandleAnswer {
    /// The TXT values at `_atproto.<handle>`.
    Txt(Vec<String>),
    /// The body of `https://<handle>/.well-known/atproto-did`.
    WellKnown(Vec<u8>),
    /// `resolveHandle`'s answer: its status and its JSON body (`Null` when it was none).
    Xrpc {
        /// The HTTP status.
        status: u16,
        /// The body.
        body: serde_json::Value,
    },
}

/// The DID `answer` names, when it is one well-formed `did:plc` or `did:web`; otherwise why
/// not, with the peer's words cut and put on one line. The rule every method's answer goes
/// through (public for the fuzz suite, target `handle_answer`).
pub fn did_of_answer(answer: &HandleAnswer) -> Result<String, String> {
    let did = match answer {
        HandleAnswer::Txt(texts) => did_from_txt(texts).ok_or("DNS: no single did= value")?,
        HandleAnswer::WellKnown(body) => {
            let body = String::from_utf8_lossy(body);
            body.lines().next().unwrap_or_default().to_owned()
        }
        HandleAnswer::Xrpc { status, body } => match body["did"].as_str() {
            Some(did) if (200..300).contains(status) => did.to_owned(),
            _ => {
                let said = body["message"].as_str().unwrap_or("no DID");
                return Err(format!("XRPC: HTTP {status}: {}", quoted(said)));
            }
        },
    };
    well_formed(did.trim())
}

fn well_formed(did: &str) -> Result<String, String> {
    match swdesk_lexicon::syntax::did(did) {
        Ok(()) if did.starts_with("did:plc:") || did.starts_with("did:web:") => Ok(did.to_owned()),
        _ => Err(format!("the answer {} is not an atproto DID", quoted(did))),
    }
}

/// A peer's words fit for a reason: one line, cut.
fn quoted(text: &str) -> String {
    format!("\"{}\"", swdesk_lexicon::text::peer_text(text, QUOTED_MAX))
}

async fn by_dns(handle: &str) -> Result<HandleAnswer, String> {
    let resolver = hickory_resolver::Resolver::builder_tokio()
        .map_err(|error| format!("DNS: no system resolver ({error})"))?
        .build()
        .map_err(|error| format!("DNS: no system resolver ({error})"))?;
    let name = format!("_atproto.{handle}.");
    let lookup = tokio::time::timeout(HOP_TIMEOUT, resolver.txt_lookup(name.as_str()))
        .await
        .map_err(|_| format!("DNS: no answer for {name} in {}s", HOP_TIMEOUT.as_secs()))?
        .map_err(|error| format!("DNS: no TXT record at {name} ({error})"))?;
    let texts: Vec<String> = lookup
        .answers()
        .iter()
        .filter_map(|record| match &record.data {
            hickory_resolver::proto::rr::RData::TXT(txt) => Some(txt.to_string()),
            _ => None,
        })
        .collect();
    Ok(HandleAnswer::Txt(texts))
}

/// The DID of exactly one `did=` TXT value; several conflicting ones resolve nothing.
fn did_from_txt(texts: &[String]) -> Option<String> {
    let mut dids = texts.iter().filter_map(|text| text.strip_prefix("did="));
    let first = dids.next()?;
    dids.all(|other| other == first).then(|| first.to_owned())
}

async fn by_well_known(http: &Outbound, handle: &str) -> Result<HandleAnswer, String> {
    let url = format!("https://{handle}/.well-known/atproto-did");
    let response = http
        .get(&url)
        .map_err(|refused| format!("HTTPS: {refused}"))?
        .timeout(HOP_TIMEOUT)
        .send()
        .await
        .map_err(|error| format!("HTTPS: {url} unreachable ({})", error.without_url()))?;
    if !response.status().is_success() {
        return Err(format!("HTTPS: {url} answered {}", response.status()));
    }
    let body = read_bytes(response, Limit::DOCUMENT)
        .await
        .map_err(|error| format!("HTTPS: {url} ({error})"))?;
    Ok(HandleAnswer::WellKnown(body.to_vec()))
}

async fn by_xrpc(http: &Outbound, service: &Url, handle: &str) -> Result<HandleAnswer, String> {
    let mut url = service
        .join("/xrpc/com.atproto.identity.resolveHandle")
        .map_err(|error| format!("XRPC: {error}"))?;
    url.query_pairs_mut().append_pair("handle", handle);
    let response = http
        .get(url)
        .map_err(|refused| format!("{service}: {refused}"))?
        .timeout(HOP_TIMEOUT)
        .send()
        .await
        .map_err(|error| format!("{service}: unreachable ({})", error.without_url()))?;
    let status = response.status().as_u16();
    let body: serde_json::Value = read_json(response, Limit::DOCUMENT)
        .await
        .unwrap_or_default();
    Ok(HandleAnswer::Xrpc { status, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_txt_record_resolves_only_when_its_did_values_agree() {
        let texts = |items: &[&str]| items.iter().map(|t| (*t).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            did_from_txt(&texts(&["did=did:plc:abc"])),
            Some("did:plc:abc".into())
        );
        assert_eq!(
            did_from_txt(&texts(&["v=spf1", "did=did:plc:abc", "did=did:plc:abc"])),
            Some("did:plc:abc".into())
        );
        assert_eq!(
            did_from_txt(&texts(&["did=did:plc:abc", "did=did:plc:xyz"])),
            None
        );
        assert_eq!(did_from_txt(&texts(&["v=spf1"])), None);
    }

    #[test]
    fn a_hostile_answer_is_quoted_back_cut_on_one_line() {
        let hostile = format!("did:\u{202E}evil\n\u{0}{}", "x".repeat(100_000));
        let answers = [
            HandleAnswer::WellKnown(hostile.clone().into_bytes()),
            HandleAnswer::Txt(vec![format!("did={hostile}")]),
            HandleAnswer::Xrpc {
                status: 200,
                body: serde_json::json!({"did": hostile}),
            },
            HandleAnswer::Xrpc {
                status: 400,
                body: serde_json::json!({"message": hostile}),
            },
        ];
        for answer in answers {
            let why = did_of_answer(&answer).expect_err("not a DID");
            assert!(why.len() <= 200, "{} bytes", why.len());
            assert!(
                !why.chars().any(|c| c.is_control() || c == '\u{202E}'),
                "{why:?}"
            );
        }
        let good = HandleAnswer::WellKnown(b"did:plc:abc123\r\nmore".to_vec());
        assert_eq!(did_of_answer(&good), Ok("did:plc:abc123".into()));
    }

    #[test]
    fn only_plc_and_web_dids_are_accepted_from_a_handle() {
        assert_eq!(well_formed("did:plc:abc123"), Ok("did:plc:abc123".into()));
        assert!(well_formed("did:key:zQ3s").is_err());
        assert!(well_formed("<html>").is_err());
    }
}
