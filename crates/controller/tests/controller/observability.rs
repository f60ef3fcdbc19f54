//! What the UI reads: the status of each key and the stream of runtime events.

use swdesk_controller::runtime::{Action, KeyStatus, ObjectKey, RuntimeEvent};
use swdesk_kernel::object::Kind;

use crate::fake::{Fake, Reply};
use crate::{ms, name, secs, spawn, wait};

#[tokio::test(start_paused = true)]
async fn status_shows_the_last_action_error_failures_and_next_run() {
    let fake = Fake::new();
    fake.script("a", [Reply::Fail, Reply::Fail]);
    let controller = spawn(&fake);
    controller.trigger().schedule(name("a")).unwrap();
    wait(1500).await;
    let expected = KeyStatus {
        running: false,
        last_action: Some(Action::RequeueAfter(secs(2))),
        last_error: Some("scripted failure".to_owned()),
        last_duration: Some(ms(0)),
        next_run: Some(fake.t0() + ms(3100)),
        failures: 2,
    };
    assert_eq!(controller.status(&name("a")), Some(expected));
}

#[tokio::test(start_paused = true)]
async fn status_shows_a_key_as_running_and_its_rerun_while_it_runs() {
    let fake = Fake::taking(ms(500));
    let controller = spawn(&fake);
    controller.trigger().schedule(name("a")).unwrap();
    wait(300).await;
    let status = controller.status(&name("a")).unwrap();
    assert!(status.running);
    assert_eq!(status.next_run, None);
    controller.trigger().schedule(name("a")).unwrap();
    wait(10).await;
    let status = controller.status(&name("a")).unwrap();
    assert_eq!(status.next_run, Some(fake.t0() + ms(400)));
}

#[tokio::test(start_paused = true)]
async fn a_key_never_scheduled_has_no_status() {
    let controller = spawn(&Fake::new());
    assert_eq!(controller.status(&name("a")), None);
}

#[tokio::test(start_paused = true)]
async fn statuses_list_every_key_seen_in_name_order() {
    let controller = spawn(&Fake::new());
    controller.trigger().schedule(name("b")).unwrap();
    controller.trigger().schedule(name("a")).unwrap();
    wait(1000).await;
    let keys: Vec<ObjectKey> = controller.statuses().into_iter().map(|(k, _)| k).collect();
    let expected = [
        ObjectKey::new(Kind::Infra, name("a")),
        ObjectKey::new(Kind::Infra, name("b")),
    ];
    assert_eq!(keys, expected);
}

#[tokio::test(start_paused = true)]
async fn events_report_each_reconcile_started_finished_and_failed_with_durations() {
    let fake = Fake::taking(ms(250));
    fake.script("a", [Reply::Fail]);
    let controller = spawn(&fake);
    let mut events = controller.events();
    controller.trigger().schedule(name("a")).unwrap();
    wait(5000).await;
    let key = ObjectKey::new(Kind::Infra, name("a"));
    let expected = [
        RuntimeEvent::Started {
            key: key.clone(),
            failures: 0,
        },
        RuntimeEvent::Failed {
            key: key.clone(),
            error: "scripted failure".to_owned(),
            failures: 1,
            retry: Action::RequeueAfter(secs(1)),
            duration: ms(250),
        },
        RuntimeEvent::Started {
            key: key.clone(),
            failures: 1,
        },
        RuntimeEvent::Finished {
            key,
            action: Action::AwaitChange,
            duration: ms(250),
        },
    ];
    let seen: Vec<_> = std::iter::from_fn(|| events.try_recv().ok()).collect();
    assert_eq!(seen, expected);
}
