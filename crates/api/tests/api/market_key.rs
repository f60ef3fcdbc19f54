//! The *Publish your market key* step as the window calls it, on the sandbox's real PDS and
//! PLC: sign-in asks for no `identity:*`; the step's own sign-in (Chromium approving) grants
//! it and replaces the session (kept for the next start); the PDS mails the code (read off the
//! sandbox's mailbox); a wrong code is told as one and changes nothing; the mailed one lists
//! this device's key in the live DID document; a second code removes it (a lost device).

use std::sync::Arc;

use swdesk_api::market_key::{ChangeAsked, ListingView};
use swdesk_api::{Desk, ErrorCode, SessionView};
use swdesk_atproto::oauth::scope;
use swdesk_devnet::{Account, SandboxPds};
use swdesk_testkit::Chromium;

use crate::session::{NoBrowser, network, sessions};

/// The code in the `seen`-th mail the PDS sent `account`, once it arrived.
async fn mailed_code(pds: &SandboxPds, account: &Account, seen: usize) -> String {
    for _ in 0..120 {
        let mails = pds.mails_to(&account.email()).unwrap();
        if let Some(mail) = mails.get(seen) {
            return mail.code().expect("the mail carries a code").to_owned();
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    panic!("no mail #{seen} to {}", account.email());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_market_key_is_published_and_removed_only_with_the_mailed_code() {
    let (pds, network, store) = network("market-key").await;
    let account = pds.create_account("apikey").await.unwrap();
    let data = tempfile::tempdir().unwrap();
    let browser = Chromium::approving(&account);
    let desk = Desk::with_sessions(
        sessions(&network, browser.clone(), &store),
        data.path().into(),
    );
    let signed = desk.sign_in(&account.handle).await.unwrap();
    assert!(
        !scope::grants(&signed.granted_scope, scope::IDENTITY),
        "sign-in asks for no identity:*"
    );

    let before = desk.market_key().await.unwrap();
    assert_eq!(before.listing, ListingView::Absent);
    assert!(!before.identity_granted && before.through_pds);
    assert!(
        before.why_identity.contains("code"),
        "{}",
        before.why_identity
    );
    let refused = desk.request_market_key_code().await.unwrap_err();
    assert_eq!(refused.code(), ErrorCode::NotGranted);

    let granted = desk.grant_identity().await.unwrap();
    assert!(granted.identity_granted);
    assert_eq!(granted.key, before.key, "the same device key");
    assert_eq!(
        pds.mails_to(&account.email()).unwrap().len(),
        0,
        "nothing mailed yet"
    );

    desk.request_market_key_code().await.unwrap();
    let code = mailed_code(&pds, &account, 0).await;
    let wrong = desk
        .change_market_key("AAAAA-BBBBB", ChangeAsked::Publish)
        .await
        .unwrap_err();
    assert_eq!(wrong.code(), ErrorCode::WrongCode, "{wrong}");
    assert_eq!(
        desk.market_key().await.unwrap().listing,
        ListingView::Absent,
        "nothing changed"
    );

    let published = desk
        .change_market_key(&code, ChangeAsked::Publish)
        .await
        .unwrap();
    assert_eq!(published.listing, ListingView::Listed);

    let next_start = sessions(&network, Arc::new(NoBrowser), &store);
    let restored = next_start.current().await;
    assert!(
        matches!(&restored, SessionView::SignedIn(account) if scope::grants(&account.granted_scope, scope::IDENTITY)),
        "the granted session replaced the old one in the keychain: {restored:?}"
    );

    desk.request_market_key_code().await.unwrap();
    let code = mailed_code(&pds, &account, 1).await;
    let removed = desk
        .change_market_key(&code, ChangeAsked::Remove)
        .await
        .unwrap();
    assert_eq!(removed.listing, ListingView::Absent);
    desk.sign_out().await.unwrap();
}
