//! Two devices on one account: each runs its own store and controller against the same repo.

use std::sync::Arc;

use serde_json::Value;
use swdesk_core::infra::{InfraSpec, InfraStatus};
use swdesk_core::name::Name;
use swdesk_core::object::Object;

use crate::support::{Core, OWNER, World};

const INFRA: &str = "computer.socialweb.infra";

fn create(world: &World, name: &str) {
    let object = Object {
        metadata: world.metadata(name),
        spec: InfraSpec {
            description: Some(name.to_owned()),
            ..Default::default()
        },
        status: InfraStatus::default(),
    };
    world.store.create::<InfraSpec>(&object).unwrap();
}

fn rkeys(list: &Value) -> Vec<String> {
    let mut keys: Vec<String> = list
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .filter_map(|e| e["rkey"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    keys.sort();
    keys
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_devices_creating_and_ending_at_once_leave_an_index_with_every_live_entry_once() {
    let laptop = World::new();
    let desktop = World::with_repo(Arc::clone(&laptop.repo));
    let (laptop_core, desktop_core) = (Core::new(&laptop), Core::new(&desktop));
    for n in 0..6 {
        create(&laptop, &format!("laptop-{n}"));
        create(&desktop, &format!("desktop-{n}"));
    }
    tokio::join!(laptop_core.settle(&laptop), desktop_core.settle(&desktop));

    for n in [1, 4] {
        laptop
            .store
            .delete::<InfraSpec>(
                &Name::parse(&format!("laptop-{n}")).unwrap(),
                laptop.clock_now(),
            )
            .unwrap();
        desktop
            .store
            .delete::<InfraSpec>(
                &Name::parse(&format!("desktop-{n}")).unwrap(),
                desktop.clock_now(),
            )
            .unwrap();
    }
    laptop_core.view.invalidate(INFRA).await;
    desktop_core.view.invalidate(INFRA).await;
    tokio::join!(laptop_core.settle(&laptop), desktop_core.settle(&desktop));

    let index = laptop.repo.value(OWNER, INFRA, "self").unwrap()["index"].clone();
    let mut expected_live: Vec<String> = [0, 2, 3, 5]
        .iter()
        .flat_map(|n| [format!("laptop-{n}"), format!("desktop-{n}")])
        .collect();
    expected_live.sort();
    assert_eq!(
        rkeys(&index["live"]),
        expected_live,
        "every live deployment once: {index}"
    );
    let mut expected_ended: Vec<String> = [1, 4]
        .iter()
        .flat_map(|n| [format!("laptop-{n}"), format!("desktop-{n}")])
        .collect();
    expected_ended.sort();
    assert_eq!(rkeys(&index["recentEnded"]), expected_ended);
    for rkey in expected_ended {
        let record = laptop.repo.value(OWNER, INFRA, &rkey).unwrap();
        assert_eq!(
            record["status"]["phase"], "ended",
            "{rkey} keeps its ended record"
        );
    }
}
