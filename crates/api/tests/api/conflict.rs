//! The account's controller when the record and this device disagree, against the real PDS:
//! a deployment edited on both sides since they last agreed stops in conflict until the owner
//! chooses (keep this side, or take the record's), and a record that does not validate is
//! shown with its problems and never written over.

use serde_json::Value;
use swdesk_api::controller::{AccountController, store_path};
use swdesk_api::records::{self, RecordView};
use swdesk_atproto::PdsRepo;
use swdesk_core::infra::InfraSpec;
use swdesk_core::sync::{Resolution, SyncState};
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::name::Name;
use swdesk_kernel::object::Kind;
use swdesk_kernel::repo::{RecordRepo, Swap};
use swdesk_kernel::rkey::Rkey;
use swdesk_kernel::uri::RecordUri;
use swdesk_store::Store;

use crate::session::{network, signed_in};
use crate::support::{
    INFRA, create_infra, description, edit_infra, eventually, infra, public_record, quick_engine,
};

/// The last sync outcome of the Infra `name`.
async fn last_sync(controller: &AccountController, name: &str) -> Option<SyncState> {
    let name = Name::parse(name).ok()?;
    let view = controller.sync_view::<InfraSpec>(&name).await.ok()??;
    view.last_sync
}

/// What the conflict view shows of the Infra `name`: its record read from the repo now,
/// beside this device's declaration.
async fn conflict_view(store: &Store, repo: &PdsRepo, name: &str) -> RecordView {
    let name = Name::parse(name).unwrap();
    let (uri, local) = records::local_side(store, DeploymentKind::Infra, &name)
        .unwrap()
        .unwrap();
    let uri = RecordUri::parse(&uri.expect("bound")).unwrap();
    let stored = repo.get(&uri).await.unwrap().expect("the record");
    records::view(DeploymentKind::Infra, &stored, local)
}

async fn edit_record(repo: &PdsRepo, pds: &str, did: &str, rkey: &str, edit: impl Fn(&mut Value)) {
    let mut value = public_record(pds, did, rkey).await.unwrap();
    edit(&mut value);
    repo.put_as_another_client(INFRA, &Rkey::parse(rkey).unwrap(), &value, Swap::Any)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_edited_on_both_sides_waits_for_the_owner_and_each_resolution_wins() {
    let (pds, network, store) = network("conflict").await;
    let pds_url = &pds.info().pds_url;
    let account = pds.create_account("confl").await.unwrap();
    let (signed, agent, resolver) = signed_in(&network, &store, &account).await;
    let data = tempfile::tempdir().unwrap();
    let start = async || {
        AccountController::start(data.path(), agent.clone(), resolver.clone(), quick_engine())
            .await
            .unwrap()
    };
    let controller = start().await;
    for name in ["keep", "take"] {
        create_infra(&controller, name, &format!("{name} v1"));
    }
    for name in ["keep", "take"] {
        eventually("published", async || {
            (last_sync(&controller, name).await == Some(SyncState::Published)).then_some(())
        })
        .await;
    }
    controller.stop().await;

    let elsewhere = PdsRepo::new(agent.clone(), resolver.clone());
    let objects = Store::open(store_path(data.path(), &account.did)).unwrap();
    for name in ["keep", "take"] {
        edit_record(&elsewhere, pds_url, &account.did, name, |record| {
            record["description"] = Value::from(format!("{name}: edited in the repo"));
        })
        .await;
        edit_infra(&objects, name, |spec| {
            spec.description = Some(format!("{name}: edited here"));
        });
    }
    drop(objects);
    let controller = start().await;
    for name in ["keep", "take"] {
        eventually("the conflict is shown", async || {
            (last_sync(&controller, name).await == Some(SyncState::Conflict)).then_some(())
        })
        .await;
        let record = public_record(pds_url, &account.did, name).await.unwrap();
        assert_eq!(
            record["description"],
            format!("{name}: edited in the repo"),
            "a conflict writes nothing"
        );
        assert_eq!(
            infra(controller.store(), name).unwrap().spec.description,
            Some(format!("{name}: edited here")),
            "a conflict changes nothing here"
        );
        let shown = conflict_view(controller.store(), &elsewhere, name).await;
        assert_eq!(shown.problems, Vec::<String>::new(), "the record is valid");
        let declared: Value = serde_json::from_str(shown.declared.as_deref().unwrap()).unwrap();
        let local: Value = serde_json::from_str(&shown.local).unwrap();
        assert_eq!(
            (
                declared["description"].as_str(),
                local["description"].as_str()
            ),
            (
                Some(format!("{name}: edited in the repo").as_str()),
                Some(format!("{name}: edited here").as_str())
            ),
            "the conflict view compares the record's declaration with this device's"
        );
        assert_eq!(declared["contracts"], local["contracts"], "in one shape");
    }

    let keep = Name::parse("keep").unwrap();
    controller
        .resolve_conflict(Kind::Infra, &keep, Resolution::KeepLocal)
        .await
        .unwrap();
    controller
        .resolve_conflict(
            Kind::Infra,
            &Name::parse("take").unwrap(),
            Resolution::TakeRecord,
        )
        .await
        .unwrap();
    eventually("keep-local writes this side to the record", async || {
        let record = public_record(pds_url, &account.did, "keep").await?;
        (record["description"] == "keep: edited here").then_some(())
    })
    .await;
    eventually("take-record applies the record here", async || {
        let object = infra(controller.store(), "take")?;
        (object.spec.description.as_deref() == Some("take: edited in the repo")).then_some(())
    })
    .await;
    for name in ["keep", "take"] {
        eventually("in sync again", async || {
            let view = controller
                .sync_view::<InfraSpec>(&Name::parse(name).unwrap())
                .await
                .ok()??;
            (view.synced == Some(true)).then_some(())
        })
        .await;
    }
    assert!(
        controller
            .resolve_conflict(Kind::Infra, &keep, Resolution::TakeRecord)
            .await
            .is_err(),
        "a deployment in sync has nothing to resolve"
    );
    controller.stop().await;
    signed.sign_out().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_that_does_not_validate_shows_its_problems_and_is_never_written_over() {
    let (pds, network, store) = network("invalid").await;
    let pds_url = &pds.info().pds_url;
    let account = pds.create_account("inval").await.unwrap();
    let (signed, agent, resolver) = signed_in(&network, &store, &account).await;
    let data = tempfile::tempdir().unwrap();
    let controller =
        AccountController::start(data.path(), agent.clone(), resolver.clone(), quick_engine())
            .await
            .unwrap();
    create_infra(&controller, "web", "web v1");
    eventually("published", async || {
        (last_sync(&controller, "web").await == Some(SyncState::Published)).then_some(())
    })
    .await;

    let elsewhere = PdsRepo::new(agent, resolver);
    edit_record(&elsewhere, pds_url, &account.did, "web", |record| {
        record["contracts"] = Value::from("not a list");
        record["createdAt"] = Value::from("yesterday");
    })
    .await;
    let broken = public_record(pds_url, &account.did, "web").await.unwrap();
    let view = eventually("the problems are shown", async || {
        let view = controller
            .sync_view::<InfraSpec>(&Name::parse("web").unwrap())
            .await
            .ok()??;
        matches!(view.last_sync, Some(SyncState::RecordInvalid { .. })).then_some(view)
    })
    .await;
    let message = view.message.unwrap_or_default();
    assert!(
        message.contains("contracts") && message.contains("createdAt"),
        "every problem is named: {message}"
    );
    let inspected = conflict_view(controller.store(), &elsewhere, "web").await;
    assert_eq!(
        inspected.declared, None,
        "an invalid record declares nothing"
    );
    let named = inspected.problems.join("; ");
    assert!(
        inspected.problems.len() >= 2 && named.contains("contracts") && named.contains("createdAt"),
        "the record inspector names every problem: {named}"
    );

    edit_infra(controller.store(), "web", |spec| {
        spec.description = Some("web v2, edited here meanwhile".into());
    });
    let mut activity = controller.activity();
    for _ in 0..3 {
        // Three more runs of the deployment (its edit, then resyncs) leave the record alone.
        loop {
            let event = activity.recv().await.unwrap();
            let web = event.name.as_deref() == Some("web") && event.kind == "Infra";
            if web && !matches!(event.what, swdesk_api::activity::Activity::Started) {
                break;
            }
        }
    }
    assert_eq!(
        public_record(pds_url, &account.did, "web").await.unwrap(),
        broken,
        "the invalid record is never written over"
    );
    assert_eq!(
        description(controller.store(), "web").as_deref(),
        Some("web v2, edited here meanwhile"),
        "the local edit is kept"
    );
    controller.stop().await;
    signed.sign_out().await.unwrap();
}
