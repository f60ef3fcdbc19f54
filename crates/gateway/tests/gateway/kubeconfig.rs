//! Kubeconfigs: the `ttlSeconds` bounds, the client certificate's validity window, `noExpiry`
//! (and a gateway that refuses it), saving with mode 0600, and what standard parsers read back;
//! the kubeconfig the app saves is rebuilt (the real `kubectl` reads exactly one cluster, user
//! and context from it) and a hostile gateway's is refused, naming each thing it asked for.

use std::path::{Path, PathBuf};
use std::process::Command;

use swdesk_gateway::kubeconfig::{KubeconfigError, Minimal, Summary, save};
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

#[tokio::test]
async fn the_saved_kubeconfig_is_rebuilt_and_the_real_kubectl_reads_exactly_it() {
    let world = World::start().await;
    let owner = world.owner("kubectl").await;
    let issued = owner
        .client
        .get_kubeconfig("eta", KubeconfigLifetime::Seconds(600))
        .await
        .unwrap();
    let minimal = Minimal::rebuild(issued.kubeconfig.expose(), "eta", now()).unwrap();
    assert_eq!(minimal.summary.subject, owner.account.did);
    let directory = scratch("kubectl");
    let path = directory.join("eta.kubeconfig");
    save(&path, minimal.text()).unwrap();

    let config = kubectl_view(&path);
    let one = |key: &str| {
        let entries = config[key].as_array().unwrap();
        assert_eq!(entries.len(), 1, "exactly one of {key}: {config:#}");
        entries[0].clone()
    };
    let (cluster, user, context) = (one("clusters"), one("users"), one("contexts"));
    assert_eq!(config["current-context"], "eta");
    assert_eq!(context["context"]["cluster"], "eta");
    assert_eq!(context["context"]["user"], "eta");
    assert_eq!(
        cluster["cluster"]["server"].as_str(),
        Some(minimal.summary.server.as_str())
    );
    let keys = |value: &serde_json::Value| {
        let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    assert_eq!(
        keys(&cluster["cluster"]),
        ["certificate-authority-data", "server"]
    );
    assert_eq!(
        keys(&user["user"]),
        ["client-certificate-data", "client-key-data"]
    );
    let reread = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        Summary::parse(&reread).unwrap(),
        minimal.summary,
        "the rebuilt file says what was verified"
    );
    std::fs::remove_dir_all(&directory).unwrap();
}

#[tokio::test]
async fn a_hostile_gateways_kubeconfig_is_refused_naming_each_thing_it_asked_for() {
    let world = World::start_with(|config| config.hostile_kubeconfig = true).await;
    let owner = world.owner("hostilekc").await;
    let issued = owner
        .client
        .get_kubeconfig("theta", KubeconfigLifetime::Seconds(600))
        .await
        .unwrap();
    let hostile = issued.kubeconfig.expose();
    assert!(
        Summary::parse(hostile).is_ok(),
        "the first cluster and user alone would pass the certificate checks"
    );
    let problems = match Minimal::rebuild(hostile, "theta", now()) {
        Err(KubeconfigError::Refused(problems)) => problems,
        other => panic!("a hostile kubeconfig is refused, got {other:?}"),
    };
    for field in [
        "users[0].user.exec",
        "users[0].user.auth-provider",
        "users[0].user.tokenFile",
        "clusters[0].cluster.proxy-url",
        "clusters[0].cluster.insecure-skip-tls-verify",
        "contexts: 2 entries",
        "current-context",
    ] {
        assert!(
            problems.iter().any(|problem| problem.starts_with(field)),
            "{field} named among {problems:?}"
        );
    }
    let message = KubeconfigError::Refused(problems).to_string();
    for secret in ["/etc/shadow", "evil.test", "client-key-data", "BEGIN"] {
        assert!(!message.contains(secret), "no value quoted: {message}");
    }
}

/// `kubectl config view --minify --raw -o json` of `path`, with the real kubectl.
fn kubectl_view(path: &Path) -> serde_json::Value {
    let output = Command::new(kubectl())
        .args(["config", "view", "--minify", "--raw", "-o", "json"])
        .env("KUBECONFIG", path)
        .output()
        .expect("kubectl runs");
    assert!(
        output.status.success(),
        "kubectl reads the saved kubeconfig: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The real kubectl: `SWDESK_KUBECTL` (set by `cargo xtask test`, which installs it), else
/// `kubectl` on `PATH`.
fn kubectl() -> PathBuf {
    std::env::var_os("SWDESK_KUBECTL").map_or_else(|| PathBuf::from("kubectl"), PathBuf::from)
}

fn scratch(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("swdesk-gw-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    directory
}
