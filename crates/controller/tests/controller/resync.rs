//! The periodic resync: every key listed at start and every period; a failed listing is
//! reported and tried again.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use swdesk_controller::runtime::{Controller, ControllerConfig, RuntimeEvent};
use swdesk_kernel::name::Name;
use swdesk_kernel::object::Kind;

use crate::fake::Fake;
use crate::{config, name, runs, secs, wait};

fn every_five_minutes() -> ControllerConfig {
    ControllerConfig {
        resync_period: secs(300),
        ..config()
    }
}

/// A lister that answers `first` at its first listing and `then` at every later one.
fn first_then<E: Clone + Send + Sync + 'static>(
    first: Result<Vec<Name>, E>,
    then: Result<Vec<Name>, E>,
) -> impl Fn() -> std::future::Ready<Result<Vec<Name>, E>> + Send + Sync + 'static {
    let listings = Arc::new(AtomicUsize::new(0));
    move || {
        let answer = if listings.fetch_add(1, Ordering::SeqCst) == 0 {
            first.clone()
        } else {
            then.clone()
        };
        std::future::ready(answer)
    }
}

#[tokio::test(start_paused = true)]
async fn the_resync_lists_every_key_at_start_and_then_every_period() {
    let fake = Fake::new();
    let lister = || async { Ok::<_, Infallible>(vec![name("a"), name("b")]) };
    let _controller =
        Controller::spawn_with_resync(Kind::Infra, fake.clone(), every_five_minutes(), lister);
    wait(11 * 60 * 1000).await;
    let expected = runs(&[
        ("a", 100),
        ("b", 100),
        ("a", 300_100),
        ("b", 300_100),
        ("a", 600_100),
        ("b", 600_100),
    ]);
    assert_eq!(fake.starts(), expected);
}

#[tokio::test(start_paused = true)]
async fn a_failed_resync_is_reported_and_tried_again_next_period() {
    let fake = Fake::new();
    let lister = first_then(Err("the store is closed"), Ok(vec![name("a")]));
    let controller =
        Controller::spawn_with_resync(Kind::Infra, fake.clone(), every_five_minutes(), lister);
    let mut events = controller.events();
    wait(6 * 60 * 1000).await;
    let seen: Vec<_> = std::iter::from_fn(|| events.try_recv().ok()).collect();
    let failed = RuntimeEvent::ResyncFailed {
        kind: Kind::Infra,
        error: "the store is closed".to_owned(),
    };
    let resynced = RuntimeEvent::Resynced {
        kind: Kind::Infra,
        keys: 1,
    };
    assert_eq!(seen[..2], [failed, resynced]);
    assert_eq!(fake.starts(), runs(&[("a", 300_100)]));
}

#[tokio::test(start_paused = true)]
async fn the_status_of_a_key_the_resync_no_longer_lists_goes() {
    let fake = Fake::new();
    // The object "gone" is deleted between the first and the second listing.
    let lister =
        first_then::<Infallible>(Ok(vec![name("kept"), name("gone")]), Ok(vec![name("kept")]));
    let controller =
        Controller::spawn_with_resync(Kind::Infra, fake.clone(), every_five_minutes(), lister);
    wait(60 * 1000).await;
    assert!(controller.status(&name("gone")).is_some());
    wait(5 * 60 * 1000).await;
    assert!(controller.status(&name("kept")).is_some());
    assert!(
        controller.status(&name("gone")).is_none(),
        "the board holds what exists, not all that ever did"
    );
}
