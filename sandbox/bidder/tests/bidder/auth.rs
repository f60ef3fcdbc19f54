//! Service auth on every market method: a token for another audience, for another method,
//! expired, or missing is refused with the `@atproto/xrpc-server` error name, and nothing is
//! acted on.

use serde_json::json;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{
    submit_accept, submit_event, submit_rfp,
};
use swdesk_sandbox_bidder::Behaviour;

use crate::support::sandbox;

#[tokio::test]
async fn a_token_for_another_audience_or_method_or_none_is_refused() {
    let sandbox = sandbox().await;
    let bidder = sandbox.bidder(Behaviour::default()).await;
    let other = sandbox.bidder(Behaviour::default()).await;
    let requester = sandbox.requester("owner").await;
    let rfp = requester.rfp().await;
    let input = json!({"rfpUri": rfp.uri, "rfpCid": rfp.cid});

    let for_other = requester.token(&other.did, submit_rfp::NSID).await;
    let answer = requester
        .call_with(&bidder, submit_rfp::NSID, Some(&for_other), &input)
        .await;
    assert_eq!(
        (answer.status, answer.error()),
        (401, "BadJwtAudience"),
        "{:?}",
        answer.body
    );

    let for_accept = requester.token(&bidder.did, submit_accept::NSID).await;
    let answer = requester
        .call_with(&bidder, submit_rfp::NSID, Some(&for_accept), &input)
        .await;
    assert_eq!(
        (answer.status, answer.error()),
        (401, "BadJwtLexiconMethod"),
        "{:?}",
        answer.body
    );

    let answer = requester
        .call_with(&bidder, submit_event::NSID, None, &json!({}))
        .await;
    assert_eq!(
        (answer.status, answer.error()),
        (401, "AuthMissing"),
        "{:?}",
        answer.body
    );

    let mut forged = requester.token(&bidder.did, submit_rfp::NSID).await;
    forged.truncate(forged.len() - 4);
    forged.push_str("AAAA");
    let answer = requester
        .call_with(&bidder, submit_rfp::NSID, Some(&forged), &input)
        .await;
    assert_eq!(
        (answer.status, answer.error()),
        (401, "BadJwtSignature"),
        "{:?}",
        answer.body
    );

    assert!(bidder.state().rfps_seen.is_empty());
    assert!(bidder.state().bids.is_empty());
    let answer = requester.call(&bidder, submit_rfp::NSID, &input).await;
    assert_eq!(
        answer.status, 200,
        "the same call with a right token goes through: {:?}",
        answer.body
    );
}

#[tokio::test]
async fn an_expired_token_is_refused() {
    let sandbox = sandbox().await;
    let two_hours_ahead = 2 * 3600;
    let bidder = sandbox
        .bidder_with(Behaviour::default(), two_hours_ahead)
        .await;
    let requester = sandbox.requester("owner").await;
    let rfp = requester.rfp().await;
    let answer = requester
        .call(
            &bidder,
            submit_rfp::NSID,
            &json!({"rfpUri": rfp.uri, "rfpCid": rfp.cid}),
        )
        .await;
    assert_eq!(
        (answer.status, answer.error()),
        (401, "JwtExpired"),
        "{:?}",
        answer.body
    );
    assert!(bidder.state().bids.is_empty());
}
