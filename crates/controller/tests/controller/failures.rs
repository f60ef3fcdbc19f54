//! The error policy: capped exponential backoff by default, reset by a success; a reconciler's
//! own policy; panics.

use swdesk_controller::runtime::{Action, Backoff, Controller, RuntimeEvent};
use swdesk_kernel::object::Kind;

use crate::fake::{Fake, Reply, WithBackoff};
use crate::{config, ms, name, runs, secs, spawn, wait};

#[tokio::test(start_paused = true)]
async fn failures_back_off_from_one_second_doubling_to_a_five_minute_cap() {
    let fake = Fake::new();
    fake.script("a", [Reply::Fail; 11]);
    let controller = spawn(&fake);
    controller.trigger().schedule(name("a")).unwrap();
    wait(2 * 60 * 60 * 1000).await;
    let expected: Vec<_> = [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300]
        .into_iter()
        .map(secs)
        .collect();
    assert_eq!(fake.gaps("a"), expected);
}

#[tokio::test(start_paused = true)]
async fn a_success_resets_the_backoff() {
    let fake = Fake::new();
    let requeue = Reply::Done(Action::RequeueAfter(secs(10)));
    fake.script("a", [Reply::Fail, Reply::Fail, requeue, Reply::Fail]);
    let controller = spawn(&fake);
    controller.trigger().schedule(name("a")).unwrap();
    wait(60_000).await;
    assert_eq!(fake.gaps("a"), [secs(1), secs(2), secs(10), secs(1)]);
    assert_eq!(controller.status(&name("a")).unwrap().failures, 0);
}

#[tokio::test(start_paused = true)]
async fn the_reconcilers_own_error_policy_decides_the_retry() {
    let fake = Fake::new();
    fake.script("a", [Reply::Fail; 5]);
    let backoff = Backoff {
        initial: ms(10),
        cap: ms(40),
    };
    let reconciler = WithBackoff(fake.clone(), backoff);
    let controller = Controller::spawn(Kind::Infra, reconciler, config());
    controller.trigger().schedule(name("a")).unwrap();
    wait(10_000).await;
    assert_eq!(fake.gaps("a"), [ms(10), ms(20), ms(40), ms(40), ms(40)]);
}

#[tokio::test(start_paused = true)]
async fn a_panicking_reconcile_fails_that_run_and_is_retried() {
    let fake = Fake::new();
    fake.script("a", [Reply::Panic]);
    let controller = spawn(&fake);
    let mut events = controller.events();
    controller.trigger().schedule(name("a")).unwrap();
    wait(10_000).await;
    assert_eq!(fake.starts(), runs(&[("a", 100), ("a", 1100)]));
    let failed = std::iter::from_fn(|| events.try_recv().ok())
        .find_map(|event| match event {
            RuntimeEvent::Failed { error, .. } => Some(error),
            _ => None,
        })
        .unwrap();
    assert_eq!(failed, "the reconcile panicked: scripted panic");
}
