//! The controlled shutdown: no new runs, running ones finish within the grace period or are
//! cut off, triggers refused afterwards.

use swdesk_controller::runtime::{Controller, ControllerConfig, ShutdownReport, Stopped};
use swdesk_kernel::object::Kind;
use tokio::time::Instant;

use crate::fake::Fake;
use crate::{config, ms, name, runs, secs, spawn, wait};

#[tokio::test(start_paused = true)]
async fn shutdown_lets_running_reconciles_finish_and_starts_no_new_ones() {
    let fake = Fake::taking(ms(500));
    let one_at_once = ControllerConfig {
        concurrency: 1,
        ..config()
    };
    let controller = Controller::spawn(Kind::Infra, fake.clone(), one_at_once);
    controller.trigger().schedule(name("a")).unwrap();
    controller.trigger().schedule(name("b")).unwrap();
    wait(200).await;
    let report = controller.shutdown(secs(10)).await.unwrap();
    let expected = ShutdownReport {
        finished: vec![name("a")],
        cut_off: vec![],
        pending: vec![name("b")],
    };
    assert_eq!(report, expected);
    assert_eq!(Instant::now() - fake.t0(), ms(600));
    wait(10_000).await;
    assert_eq!(fake.starts(), runs(&[("a", 100)]));
    assert_eq!(fake.ends(), runs(&[("a", 600)]));
}

#[tokio::test(start_paused = true)]
async fn shutdown_cuts_off_reconciles_that_outlast_the_grace_period() {
    let fake = Fake::taking(secs(10));
    let controller = spawn(&fake);
    controller.trigger().schedule(name("a")).unwrap();
    wait(200).await;
    let report = controller.shutdown(secs(1)).await.unwrap();
    assert_eq!(report.cut_off, [name("a")]);
    assert!(report.finished.is_empty());
    assert_eq!(Instant::now() - fake.t0(), ms(1200));
    assert!(fake.ends().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_trigger_sent_just_before_the_shutdown_is_reported_pending() {
    let fake = Fake::new();
    let controller = spawn(&fake);
    controller.trigger().schedule(name("a")).unwrap();
    let report = controller.shutdown(secs(1)).await.unwrap();
    assert_eq!(report.pending, [name("a")]);
    assert!(fake.starts().is_empty());
}

#[tokio::test(start_paused = true)]
async fn triggers_are_refused_once_the_controller_has_stopped() {
    let controller = spawn(&Fake::new());
    let trigger = controller.trigger();
    controller.shutdown(secs(1)).await.unwrap();
    let refused = trigger.schedule(name("a"));
    assert_eq!(refused, Err(Stopped { kind: Kind::Infra }));
}

#[tokio::test(start_paused = true)]
async fn dropping_the_controller_stops_its_loop() {
    let controller = spawn(&Fake::new());
    let trigger = controller.trigger();
    drop(controller);
    wait(10).await;
    assert!(trigger.schedule_after(name("a"), secs(1)).is_err());
}
