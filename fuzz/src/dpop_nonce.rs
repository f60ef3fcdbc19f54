//! `dpop_nonce`: the `DPoP-Nonce` and `Date` headers of a server's answer, remembered by
//! `swdesk_atproto::oauth::Nonces::remember` (per origin), then used the way every request uses
//! them: the nonce to send (`for_url`), the server's time (`now_for`), and a DPoP proof signed
//! with them (`DpopKey::proof`, with the fixed P-256 key of `jwt`). The input is the nonce's
//! bytes, a newline, the date's bytes (each becomes a header only when it is a valid value).
//!
//! Invariants:
//! - the nonce remembered is exactly the header's text, for its origin only; a value that is
//!   not visible ASCII is not taken;
//! - the server's time is its `Date` (as HTTP reads it) plus the seconds since, for its origin
//!   only; an unreadable date leaves our clock; no date, however far, overflows;
//! - the proof verifies with the key and names the request (`htm`, `htu` without query or
//!   fragment), the nonce remembered, the server's time and the token's hash (checked on one
//!   input in 16, chosen by its bytes: signing is what makes a run slow).

use reqwest::header::{DATE, HeaderMap, HeaderValue};
use serde_json::Value;
use swdesk_atproto::did_key::PublicKey;
use swdesk_atproto::jwt::Unverified;
use swdesk_atproto::oauth::{DpopKey, Nonces};
use url::Url;

/// How far the clock may move while one input runs.
const SLACK: i64 = 5;
/// One input in this many also signs and verifies a proof (ECDSA: see `crate::sampled`).
const SIGN_ONE_IN: u64 = 16;

pub fn check(data: &[u8]) {
    let mut parts = data.splitn(2, |byte| *byte == b'\n');
    let nonce = parts.next().unwrap_or_default();
    let date = parts.next().unwrap_or_default();
    let mut headers = HeaderMap::new();
    let nonce_header = HeaderValue::from_bytes(nonce).ok();
    if let Some(value) = &nonce_header {
        headers.insert("dpop-nonce", value.clone());
    }
    let date_header = HeaderValue::from_bytes(date).ok();
    if let Some(value) = &date_header {
        headers.insert(DATE, value.clone());
    }
    let server = date_header
        .as_ref()
        .and_then(|value| value.to_str().ok())
        .and_then(|text| httpdate::parse_http_date(text).ok())
        .and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|since| i64::try_from(since.as_secs()).ok());

    let pds = url("https://pds.example.com/xrpc/com.atproto.repo.putRecord?x=1#f");
    let other = url("https://auth.example.org/oauth/token");
    let nonces = Nonces::default();
    nonces.remember(&pds, &headers);
    let expected = nonce_header
        .as_ref()
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    assert_eq!(nonces.for_url(&pds), expected, "the nonce remembered");
    assert_eq!(
        nonces.for_url(&other),
        None,
        "a nonce leaked to another origin"
    );
    let same_origin = url("https://pds.example.com/oauth/par");
    assert_eq!(
        nonces.for_url(&same_origin),
        expected,
        "the nonce is the origin's"
    );

    let server_now = nonces.now_for(&pds);
    let reference = server.unwrap_or_else(unix_now);
    assert!(
        (server_now - reference).abs() <= SLACK,
        "the server's time {server_now} is not its date {reference}"
    );
    assert!((nonces.now_for(&other) - unix_now()).abs() <= SLACK);

    nonces.remember(&pds, &HeaderMap::new());
    assert_eq!(
        nonces.for_url(&pds),
        expected,
        "an answer without a nonce forgot it"
    );

    if crate::sampled(data, SIGN_ONE_IN) {
        proof(&nonces, &pds, expected.as_deref(), server_now);
    }
}

/// A proof signed with what was remembered verifies and names it.
fn proof(nonces: &Nonces, pds: &Url, nonce: Option<&str>, server_now: i64) {
    let Some(key) = DpopKey::from_secret_bytes(&[0x11; 32]) else {
        unreachable!("a fixed valid scalar")
    };
    let sent = nonces.for_url(pds);
    let token = key.proof("POST", pds, sent.as_deref(), Some("token"), server_now);
    let parsed = match Unverified::parse(&token) {
        Ok(parsed) => parsed,
        Err(error) => panic!("our own proof does not parse: {error}"),
    };
    let public = PublicKey::P256(*crate::jwt::p256_key().verifying_key());
    let claims: Value = match parsed.verify(&public) {
        Ok(claims) => claims,
        Err(error) => panic!("our own proof does not verify: {error}"),
    };
    assert_eq!(claims["htm"], "POST");
    assert_eq!(
        claims["htu"],
        "https://pds.example.com/xrpc/com.atproto.repo.putRecord"
    );
    assert_eq!(claims["nonce"].as_str(), nonce);
    assert_eq!(claims["iat"].as_i64(), Some(server_now));
    assert!(claims["ath"].is_string());
}

fn url(text: &str) -> Url {
    match Url::parse(text) {
        Ok(url) => url,
        Err(error) => unreachable!("a fixed URL: {error}"),
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}
