//! Kubeconfigs: the `ttlSeconds` bounds, the client certificate's validity window, `noExpiry`
//! (and a gateway that refuses it), saving with mode 0600, and what standard parsers read back.

use swdesk_gateway::kubeconfig::{KubeconfigError, Summary, save};
use swdesk_gateway::{ErrorName, Gateway, GatewayError, KubeconfigLifetime};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::defs::Phase;

use crate::support::{World, now};

fn refused_name(result: Result<impl std::fmt::Debug, GatewayError>) -> (ErrorName, String) {
    match result {
        Err(GatewayError::Refused { name, message, .. }) => (name, message),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn kubeconfig_lifetimes_follow_the_ttl_rule_and_the_certificate_says_so() {
    let world = World::start().await;
    let owner = world.owner("kubecfg").await;
    let client = &owner.client;

    for ttl in [59, 86_401, 0, -5] {
        let (name, _) = refused_name(
            client
                .get_kubeconfig("epsilon", KubeconfigLifetime::Seconds(ttl))
                .await,
        );
        assert_eq!(name, ErrorName::InvalidTtl, "ttl {ttl}");
    }
    let (name, message) = refused_name(
        client
            .get_kubeconfig("Bad_Name", KubeconfigLifetime::Seconds(1))
            .await,
    );
    assert_eq!(name, ErrorName::InvalidName);
    assert!(
        message.contains("DNS-1123") && message.contains("outside 60..86400"),
        "every problem named: {message}"
    );
    assert!(
        client.list_clusters().await.unwrap().is_empty(),
        "a refused call creates nothing"
    );

    for (lifetime, seconds) in [
        (KubeconfigLifetime::Seconds(60), 60),
        (KubeconfigLifetime::Seconds(86_400), 86_400),
        (KubeconfigLifetime::Default, 28_800),
    ] {
        let before = now();
        let issued = client.get_kubeconfig("epsilon", lifetime).await.unwrap();
        let after = now();
        let summary = Summary::parse(issued.kubeconfig.expose()).unwrap();
        assert!(
            (before - 1..=after + 1).contains(&summary.not_before),
            "valid from now: {summary:?}"
        );
        assert_eq!(
            summary.not_after - summary.not_before,
            seconds,
            "{lifetime:?}"
        );
        assert_eq!(summary.subject, owner.account.did);
    }

    let unbounded = client
        .get_kubeconfig("epsilon", KubeconfigLifetime::NoExpiry)
        .await
        .unwrap();
    let summary = Summary::parse(unbounded.kubeconfig.expose()).unwrap();
    assert_eq!(
        summary.not_after, 253_402_300_799,
        "no expiry is 9999-12-31T23:59:59Z"
    );

    let cluster = client
        .list_clusters()
        .await
        .unwrap()
        .into_iter()
        .find(|c| c.name == "epsilon")
        .unwrap();
    assert_eq!(
        (cluster.phase, cluster.running),
        (Phase::Unavailable, Some(false)),
        "created on read, not started"
    );
    assert_eq!(Some(unbounded.instance.clone()), cluster.instance);
    assert_eq!(Some(summary.server.clone()), cluster.server);
    assert!(
        summary.issuer.contains("epsilon"),
        "signed by the cluster's CA: {summary:?}"
    );
    assert!(
        !format!("{unbounded:?}").contains("client-key-data"),
        "Debug hides the credential"
    );

    let other = client
        .get_kubeconfig("other", KubeconfigLifetime::Default)
        .await
        .unwrap();
    let spliced = splice_ca(unbounded.kubeconfig.expose(), other.kubeconfig.expose());
    assert_eq!(
        Summary::parse(&spliced),
        Err(KubeconfigError::Untrusted),
        "each cluster has its own CA"
    );

    let issued = Summary::parse(other.kubeconfig.expose()).unwrap();
    assert_eq!(
        Summary::verify(other.kubeconfig.expose(), issued.not_after),
        Err(KubeconfigError::Expired(issued.not_after)),
        "one that expired is not saved"
    );
    assert_eq!(
        Summary::verify(other.kubeconfig.expose(), issued.not_before),
        Ok(issued)
    );
    let keyless: String = other
        .kubeconfig
        .expose()
        .lines()
        .filter(|line| !line.contains("client-key-data"))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(
        Summary::parse(&keyless),
        Err(KubeconfigError::Missing("client key"))
    );

    let directory = std::env::temp_dir().join(format!("swdesk-gw-test-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let path = directory.join("epsilon.kubeconfig");
    std::fs::write(&path, "an older kubeconfig").unwrap();
    save(&path, &unbounded.kubeconfig).unwrap();
    let names: Vec<String> = std::fs::read_dir(&directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec!["epsilon.kubeconfig"],
        "replaced in place, no temporary file left"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    assert_eq!(
        &std::fs::read_to_string(&path).unwrap(),
        unbounded.kubeconfig.expose()
    );
    std::fs::remove_dir_all(&directory).unwrap();
}

#[tokio::test]
async fn a_gateway_that_does_not_allow_no_expiry_refuses_it() {
    let world = World::start_with(|config| config.allow_no_expiry = false).await;
    let owner = world.owner("noexpiry").await;
    let (name, _) = refused_name(
        owner
            .client
            .get_kubeconfig("zeta", KubeconfigLifetime::NoExpiry)
            .await,
    );
    assert_eq!(name, ErrorName::NoExpiryNotAllowed);
    owner
        .client
        .get_kubeconfig("zeta", KubeconfigLifetime::Seconds(600))
        .await
        .unwrap();
}

/// `target` with the cluster CA of `donor`.
fn splice_ca(target: &str, donor: &str) -> String {
    let ca_line = |text: &str| {
        text.lines()
            .find(|line| line.trim_start().starts_with("certificate-authority-data:"))
            .unwrap()
            .to_owned()
    };
    target.replace(&ca_line(target), &ca_line(donor))
}
