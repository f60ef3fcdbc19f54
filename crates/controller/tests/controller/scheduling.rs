//! Dedupe, debounce, one run per key at a time, concurrency across keys, requeues.

use swdesk_controller::runtime::{Action, Controller, ControllerConfig};
use swdesk_kernel::object::Kind;

use crate::fake::{Fake, Reply};
use crate::{config, ms, name, runs, secs, spawn, wait};

#[tokio::test(start_paused = true)]
async fn a_key_scheduled_twice_runs_once() {
    let fake = Fake::new();
    let controller = spawn(&fake);
    let trigger = controller.trigger();
    trigger.schedule(name("a")).unwrap();
    trigger.schedule(name("a")).unwrap();
    wait(10_000).await;
    assert_eq!(fake.starts(), runs(&[("a", 100)]));
}

#[tokio::test(start_paused = true)]
async fn a_burst_of_triggers_runs_once_after_it_settles() {
    let fake = Fake::new();
    let controller = spawn(&fake);
    let trigger = controller.trigger();
    for pause in [50, 70, 0] {
        trigger.schedule(name("a")).unwrap();
        wait(pause).await;
    }
    wait(10_000).await;
    assert_eq!(fake.starts(), runs(&[("a", 220)]));
}

#[tokio::test(start_paused = true)]
async fn a_key_triggered_without_pause_still_runs_once_a_second() {
    let fake = Fake::new();
    let controller = spawn(&fake);
    for _ in 0..34 {
        controller.trigger().schedule(name("a")).unwrap();
        wait(60).await;
    }
    wait(10_000).await;
    assert_eq!(fake.starts(), runs(&[("a", 1000), ("a", 2020)]));
}

#[tokio::test(start_paused = true)]
async fn a_trigger_during_a_run_gives_exactly_one_more_run_after_it() {
    let fake = Fake::taking(ms(500));
    let controller = spawn(&fake);
    let trigger = controller.trigger();
    trigger.schedule(name("a")).unwrap();
    wait(200).await;
    trigger.schedule(name("a")).unwrap();
    wait(100).await;
    trigger.schedule(name("a")).unwrap();
    wait(10_000).await;
    assert_eq!(fake.starts(), runs(&[("a", 100), ("a", 600)]));
}

#[tokio::test(start_paused = true)]
async fn a_rerun_still_waits_out_the_debounce_of_its_trigger() {
    let fake = Fake::taking(ms(500));
    let controller = spawn(&fake);
    let trigger = controller.trigger();
    trigger.schedule(name("a")).unwrap();
    wait(550).await;
    trigger.schedule(name("a")).unwrap();
    wait(10_000).await;
    assert_eq!(fake.starts(), runs(&[("a", 100), ("a", 650)]));
}

#[tokio::test(start_paused = true)]
async fn one_key_is_never_reconciled_twice_at_once() {
    let fake = Fake::taking(ms(300));
    let controller = spawn(&fake);
    let trigger = controller.trigger();
    for _ in 0..40 {
        trigger.schedule(name("a")).unwrap();
        trigger.schedule_after(name("a"), ms(0)).unwrap();
        wait(50).await;
    }
    wait(10_000).await;
    assert!(fake.starts().len() > 3);
    assert_eq!(fake.most_at_once_per_key(), 1);
}

#[tokio::test(start_paused = true)]
async fn keys_run_in_parallel_up_to_the_concurrency_limit() {
    let fake = Fake::taking(ms(500));
    let two_at_once = ControllerConfig {
        concurrency: 2,
        ..config()
    };
    let controller = Controller::spawn(Kind::Infra, fake.clone(), two_at_once);
    for key in ["c", "b", "a"] {
        controller.trigger().schedule(name(key)).unwrap();
    }
    wait(10_000).await;
    assert_eq!(fake.starts(), runs(&[("a", 100), ("b", 100), ("c", 600)]));
    assert_eq!(fake.most_at_once(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_requeue_after_runs_the_key_again_after_the_delay() {
    let fake = Fake::new();
    fake.script("a", [Reply::Done(Action::RequeueAfter(secs(30)))]);
    let controller = spawn(&fake);
    controller.trigger().schedule(name("a")).unwrap();
    wait(120_000).await;
    assert_eq!(fake.starts(), runs(&[("a", 100), ("a", 30_100)]));
}

#[tokio::test(start_paused = true)]
async fn await_change_leaves_a_key_idle_until_it_is_triggered_again() {
    let fake = Fake::new();
    let controller = spawn(&fake);
    controller.trigger().schedule(name("a")).unwrap();
    wait(600_000).await;
    assert_eq!(fake.starts(), runs(&[("a", 100)]));
    controller.trigger().schedule(name("a")).unwrap();
    wait(1000).await;
    assert_eq!(fake.starts(), runs(&[("a", 100), ("a", 600_100)]));
}

#[tokio::test(start_paused = true)]
async fn a_trigger_brings_a_distant_requeue_forward_and_replaces_it() {
    let fake = Fake::new();
    fake.script("a", [Reply::Done(Action::RequeueAfter(secs(60)))]);
    let controller = spawn(&fake);
    controller.trigger().schedule(name("a")).unwrap();
    wait(1000).await;
    controller.trigger().schedule(name("a")).unwrap();
    wait(120_000).await;
    assert_eq!(fake.starts(), runs(&[("a", 100), ("a", 1100)]));
}

#[tokio::test(start_paused = true)]
async fn schedule_after_runs_the_key_at_its_delay_without_debounce() {
    let fake = Fake::new();
    let controller = spawn(&fake);
    controller
        .trigger()
        .schedule_after(name("a"), secs(5))
        .unwrap();
    controller
        .trigger()
        .schedule_after(name("b"), ms(0))
        .unwrap();
    wait(10_000).await;
    assert_eq!(fake.starts(), runs(&[("b", 0), ("a", 5000)]));
}
