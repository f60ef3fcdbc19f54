//! Async callers through `Store::call`: one call runs at a time, the others wait as tasks,
//! and a call that panics is told as an error while the store keeps serving.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use swdesk_core::infra::InfraSpec;
use swdesk_store::StoreError;

use crate::support::{infra, name, open};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_callers_take_the_store_one_at_a_time() {
    let (_dir, store) = open();
    let store = Arc::new(store);
    let (inside, most_at_once) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let callers: Vec<_> = (0..8u8)
        .map(|n| {
            let (store, inside, most) = (
                Arc::clone(&store),
                Arc::clone(&inside),
                Arc::clone(&most_at_once),
            );
            tokio::spawn(async move {
                store
                    .call(move |store| {
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(20));
                        let created = store.create(&infra(&format!("web{n}"), n));
                        inside.fetch_sub(1, Ordering::SeqCst);
                        created
                    })
                    .await
            })
        })
        .collect();
    for caller in callers {
        caller.await.unwrap().unwrap().unwrap();
    }
    assert_eq!(most_at_once.load(Ordering::SeqCst), 1, "one call at a time");
    let listed = store.call(|store| store.list::<InfraSpec>()).await;
    assert_eq!(listed.unwrap().unwrap().len(), 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_panics_is_an_error_and_the_next_call_is_served() {
    let (_dir, store) = open();
    let store = Arc::new(store);
    let panicked = store.call(|_| -> () { panic!("a caller's bug") }).await;
    assert!(
        matches!(panicked, Err(StoreError::Interrupted(_))),
        "{panicked:?}"
    );
    let found = store
        .call(|store| store.get::<InfraSpec>(&name("web")))
        .await;
    assert!(found.unwrap().unwrap().is_none(), "the turn was given back");
}
