//! Two devices on one account: each runs its own store and controller against the same repo.

use std::sync::Arc;

use serde_json::Value;
use swdesk_auction::compute::ComputeContractSpec;
use swdesk_core::collection::{CollectionStatus, FOLLOWER_LABEL, InfraCollectionSpec};
use swdesk_core::infra::{InfraSpec, InfraStatus};
use swdesk_kernel::name::Name;
use swdesk_kernel::object::Object;
use swdesk_kernel::rollup::{ContractPhase, ObjectPhase};

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

#[tokio::test(start_paused = true)]
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

#[tokio::test(start_paused = true)]
async fn another_devices_deployment_is_followed_edited_through_its_record_and_run_only_by_its_writer()
 {
    let laptop = World::new();
    let desktop = World::with_repo(Arc::clone(&laptop.repo));
    let (laptop_core, desktop_core) = (Core::new(&laptop), Core::new(&desktop));
    let mut web = Object {
        metadata: laptop.metadata("web"),
        spec: InfraSpec {
            description: Some("from the laptop".into()),
            ..Default::default()
        },
        status: InfraStatus::default(),
    };
    web.spec.contracts.push(swdesk_core::infra::Contract {
        name: "api".into(),
        state: swdesk_core::infra::ContractState::Requested,
        ..Default::default()
    });
    laptop.store.create::<InfraSpec>(&web).unwrap();
    laptop_core.settle(&laptop).await;

    let collection = Object {
        metadata: desktop.metadata("mine"),
        spec: InfraCollectionSpec {
            repo: OWNER.to_owned(),
        },
        status: CollectionStatus::default(),
    };
    desktop
        .store
        .create::<InfraCollectionSpec>(&collection)
        .unwrap();
    desktop_core.settle(&desktop).await;
    let follower = desktop
        .store
        .get::<InfraSpec>(&Name::parse("web").unwrap())
        .unwrap()
        .expect("a follower");
    assert!(follower.metadata.labels.contains_key(FOLLOWER_LABEL));
    assert_eq!(
        follower.spec.description.as_deref(),
        Some("from the laptop")
    );
    assert_eq!(
        follower.status.phase,
        ObjectPhase::Deploying,
        "the writer's phase is shown"
    );
    assert_eq!(
        follower.status.contracts[0].phase,
        ContractPhase::Requesting
    );
    assert!(
        desktop
            .store
            .list::<ComputeContractSpec>()
            .unwrap()
            .is_empty(),
        "only the writer runs contracts"
    );

    let mut edited = follower;
    edited.spec.description = Some("edited on the desktop".into());
    desktop.store.replace::<InfraSpec>(&edited).unwrap();
    desktop_core.settle(&desktop).await;
    let record = laptop.repo.value(OWNER, INFRA, "web").unwrap();
    assert_eq!(record["description"], "edited on the desktop");
    assert_eq!(
        record["status"]["phase"], "deploying",
        "the writer's status is kept"
    );
    laptop_core.view.invalidate(INFRA).await;
    laptop_core.settle(&laptop).await;
    let pulled = laptop
        .store
        .get::<InfraSpec>(&Name::parse("web").unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(
        pulled.spec.description.as_deref(),
        Some("edited on the desktop")
    );

    laptop
        .store
        .delete::<InfraSpec>(&Name::parse("web").unwrap(), laptop.clock_now())
        .unwrap();
    laptop_core.settle(&laptop).await;
    desktop_core.view.invalidate(INFRA).await;
    desktop_core.settle(&desktop).await;
    assert!(
        desktop
            .store
            .get::<InfraSpec>(&Name::parse("web").unwrap())
            .unwrap()
            .is_none(),
        "the follower goes"
    );
    assert_eq!(
        laptop.repo.value(OWNER, INFRA, "web").unwrap()["status"]["phase"],
        "ended"
    );
}
