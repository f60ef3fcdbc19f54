//! The finalizer protocol: the decision, the helper running the caller's closures, and a
//! reconciler built on it running in a controller.

use std::sync::Mutex;

use swdesk_controller::runtime::finalizer::{
    CleanupProgress, FinalizerError, FinalizerStep, FinalizerSteps, finalize, next_step,
};
use swdesk_controller::runtime::{Action, ObjectKey, Reconciler};
use swdesk_kernel::object::{Kind, Metadata, Uid};
use swdesk_kernel::timestamp::Timestamp;

use std::sync::Arc;

use swdesk_controller::runtime::Controller;

use crate::{config, name, secs, wait};

const FINALIZER: &str = "infra.socialweb.computer/cleanup";

fn object(finalizers: &[&str], deleting: bool) -> Metadata {
    let created = Timestamp::from_unix_millis(0).unwrap();
    let mut metadata = Metadata::new(name("web"), Uid::from_bytes([1; 16]), created);
    metadata.finalizers = finalizers.iter().map(|f| (*f).to_owned()).collect();
    metadata.deletion_requested_at = deleting.then_some(created);
    metadata
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("oops")]
struct Oops;

/// What apply and cleanup answer, and whether removing the finalizer fails.
struct Script {
    apply: Result<Action, Oops>,
    cleanup: Result<CleanupProgress, Oops>,
}

impl Default for Script {
    fn default() -> Self {
        Self {
            apply: Ok(Action::AwaitChange),
            cleanup: Ok(CleanupProgress::Done),
        }
    }
}

/// Runs `finalize` with closures that record their calls.
async fn run(
    metadata: &Metadata,
    script: Script,
) -> (Result<Action, FinalizerError<Oops>>, Vec<&'static str>) {
    let calls = Mutex::new(Vec::new());
    let record = |step: &'static str| calls.lock().unwrap().push(step);
    let steps = FinalizerSteps {
        add_finalizer: async || {
            record("add");
            Ok(())
        },
        apply: async move || {
            record("apply");
            script.apply
        },
        cleanup: async move || {
            record("cleanup");
            script.cleanup
        },
        remove_finalizer: async || {
            record("remove");
            Ok(())
        },
    };
    let result = finalize(metadata, FINALIZER, steps).await;
    (result, calls.into_inner().unwrap())
}

#[tokio::test]
async fn an_object_without_the_finalizer_gets_it_before_anything_is_applied() {
    let metadata = object(&["someone.else/keep"], false);
    assert_eq!(next_step(&metadata, FINALIZER), FinalizerStep::AddFinalizer);
    let (result, calls) = run(&metadata, Script::default()).await;
    assert_eq!(result.unwrap(), Action::AwaitChange);
    assert_eq!(calls, ["add"]);
}

#[tokio::test]
async fn an_object_holding_the_finalizer_is_applied() {
    let metadata = object(&[FINALIZER], false);
    assert_eq!(next_step(&metadata, FINALIZER), FinalizerStep::Apply);
    let script = Script {
        apply: Ok(Action::RequeueAfter(secs(60))),
        ..Script::default()
    };
    let (result, calls) = run(&metadata, script).await;
    assert_eq!(result.unwrap(), Action::RequeueAfter(secs(60)));
    assert_eq!(calls, ["apply"]);
}

#[tokio::test]
async fn a_deleting_object_holding_the_finalizer_is_cleaned_up_then_released() {
    let metadata = object(&[FINALIZER], true);
    assert_eq!(next_step(&metadata, FINALIZER), FinalizerStep::Cleanup);
    let (result, calls) = run(&metadata, Script::default()).await;
    assert_eq!(result.unwrap(), Action::AwaitChange);
    assert_eq!(calls, ["cleanup", "remove"]);
}

#[tokio::test]
async fn a_cleanup_still_waiting_keeps_the_finalizer_and_comes_back_later() {
    let script = Script {
        cleanup: Ok(CleanupProgress::Waiting(Action::RequeueAfter(secs(10)))),
        ..Script::default()
    };
    let (result, calls) = run(&object(&[FINALIZER], true), script).await;
    assert_eq!(result.unwrap(), Action::RequeueAfter(secs(10)));
    assert_eq!(calls, ["cleanup"]);
}

#[tokio::test]
async fn a_failed_cleanup_keeps_the_finalizer_and_names_the_step() {
    let script = Script {
        cleanup: Err(Oops),
        ..Script::default()
    };
    let (result, calls) = run(&object(&[FINALIZER], true), script).await;
    assert!(matches!(result, Err(FinalizerError::Cleanup(Oops))));
    assert_eq!(calls, ["cleanup"]);
}

#[tokio::test]
async fn a_deleting_object_without_the_finalizer_needs_nothing() {
    let metadata = object(&["someone.else/keep"], true);
    assert_eq!(next_step(&metadata, FINALIZER), FinalizerStep::Released);
    let (result, calls) = run(&metadata, Script::default()).await;
    assert_eq!(result.unwrap(), Action::AwaitChange);
    assert!(calls.is_empty());
}

/// A reconciler keeping one object in memory, built on `finalize`.
#[derive(Debug)]
struct OneObject {
    metadata: Mutex<Metadata>,
    log: Mutex<Vec<&'static str>>,
}

impl OneObject {
    fn note(&self, step: &'static str) {
        self.log.lock().unwrap().push(step);
    }

    fn set_finalizer(&self, held: bool) {
        let mut metadata = self.metadata.lock().unwrap();
        metadata.finalizers.retain(|f| f != FINALIZER);
        if held {
            metadata.finalizers.push(FINALIZER.to_owned());
        }
    }
}

impl Reconciler for OneObject {
    type Error = FinalizerError<Oops>;

    async fn reconcile(&self, _key: &ObjectKey) -> Result<Action, Self::Error> {
        let metadata = self.metadata.lock().unwrap().clone();
        let steps = FinalizerSteps {
            add_finalizer: async || {
                self.set_finalizer(true);
                tokio::task::yield_now().await;
                Ok(())
            },
            apply: async || {
                self.note("apply");
                tokio::task::yield_now().await;
                Ok(Action::AwaitChange)
            },
            cleanup: async || {
                self.note("cleanup");
                Ok(CleanupProgress::Done)
            },
            remove_finalizer: async || {
                self.set_finalizer(false);
                Ok(())
            },
        };
        finalize(&metadata, FINALIZER, steps).await
    }
}

#[tokio::test(start_paused = true)]
async fn a_reconciler_built_on_the_finalizer_helper_runs_in_a_controller() {
    let reconciler = Arc::new(OneObject {
        metadata: Mutex::new(object(&[], false)),
        log: Mutex::default(),
    });
    let controller = Controller::spawn(Kind::Infra, Arc::clone(&reconciler), config());
    for deleting in [false, false, true] {
        if deleting {
            let now = Timestamp::from_unix_millis(1).unwrap();
            reconciler.metadata.lock().unwrap().deletion_requested_at = Some(now);
        }
        controller.trigger().schedule(name("web")).unwrap();
        wait(1000).await;
    }
    assert_eq!(*reconciler.log.lock().unwrap(), ["apply", "cleanup"]);
    assert!(reconciler.metadata.lock().unwrap().finalizers.is_empty());
}
