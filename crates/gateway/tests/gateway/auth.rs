//! Service auth at the gateway: a token for another method, another audience, one signed by a
//! key that is not the issuer's, an expired one, none at all: each refused with its 401.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use swdesk_gateway::{ErrorName, Gateway, GatewayError};

use crate::support::{World, now};

const LIST: &str = "com.publicdomainrelay.temp.cluster.listClusters";
const GET_JOB: &str = "computer.socialweb.k8s.getJob";

/// Calls `listClusters` with `token` as the bearer; the status and body.
async fn list_with(world: &World, token: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new().get(format!("{}xrpc/{LIST}", world.gateway.url));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// An ES256K token claiming to be from `iss`, signed with a key that is not its own.
fn forged(iss: &str, aud: &str) -> String {
    use k256::ecdsa::signature::Signer as _;
    let key = k256::ecdsa::SigningKey::random(&mut rand_core::OsRng);
    let part = |value: Value| URL_SAFE_NO_PAD.encode(serde_json::to_vec(&value).unwrap());
    let input = format!(
        "{}.{}",
        part(json!({"alg": "ES256K", "typ": "JWT"})),
        part(json!({"iss": iss, "aud": aud, "lxm": LIST, "iat": now(), "exp": now() + 60}))
    );
    let signature: k256::ecdsa::Signature = key.sign(input.as_bytes());
    let signature = signature.normalize_s().unwrap_or(signature);
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
}

#[tokio::test]
async fn tokens_for_another_method_audience_or_key_and_missing_tokens_are_refused() {
    let world = World::start().await;
    let owner = world.owner("auth").await;
    let gateway = world.gateway.did.clone();

    let right = owner.mint(&gateway, LIST).await;
    assert_eq!(
        list_with(&world, Some(&right)).await.0,
        200,
        "the right token is accepted"
    );

    let cases = [
        (None, "AuthMissing"),
        (
            Some(owner.mint(&gateway, GET_JOB).await),
            "BadJwtLexiconMethod",
        ),
        (
            Some(owner.mint("did:web:elsewhere.example", LIST).await),
            "BadJwtAudience",
        ),
        (
            Some(forged(&owner.account.did, &gateway)),
            "BadJwtSignature",
        ),
        (Some("not.a.jwt".to_owned()), "BadJwt"),
    ];
    for (token, expected) in cases {
        let (status, body) = list_with(&world, token.as_deref()).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (401, Some(expected)),
            "{body}"
        );
        assert!(
            body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{body}"
        );
    }
}

#[tokio::test]
async fn an_expired_token_is_refused_with_its_own_error() {
    // The gateway's clock runs an hour ahead: a token the PDS just minted (60 s) has expired.
    let world = World::start_with(|config| config.clock_skew_seconds = 3600).await;
    let owner = world.owner("expired").await;
    match owner.client.list_clusters().await {
        Err(GatewayError::Refused {
            status: 401,
            name: ErrorName::JwtExpired,
            ..
        }) => {}
        other => panic!("expected JwtExpired, got {other:?}"),
    }
}
