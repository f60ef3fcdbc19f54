//! What the owner's repo on the sandbox PDS holds once the list is seeded: the deployment
//! records of `computer.socialweb.infra`, and how many live entries the index at `self` lists
//! (SPEC §2 caps it at 256; a deployment past that is published but not listed).

use anyhow::Context;
use serde_json::Value;
use swdesk_devnet::SandboxPds;

const COLLECTION: &str = "computer.socialweb.infra";

/// The records and the index's live entries.
#[derive(Debug, Clone, Copy, Default)]
pub struct RepoCount {
    pub records: usize,
    pub index_live: usize,
}

/// Counts the owner's deployment records (one `listRecords` walk) and the index's live entries.
pub async fn count(pds: &SandboxPds, did: &str) -> anyhow::Result<RepoCount> {
    let http = reqwest::Client::new();
    let mut cursor: Option<String> = None;
    let mut counted = RepoCount::default();
    loop {
        let page = list_page(&http, pds, did, cursor.as_deref()).await?;
        for record in page["records"].as_array().into_iter().flatten() {
            if record["uri"]
                .as_str()
                .is_some_and(|uri| uri.ends_with("/self"))
            {
                counted.index_live = record["value"]["index"]["live"]
                    .as_array()
                    .map_or(0, Vec::len);
            } else {
                counted.records += 1;
            }
        }
        cursor = page["cursor"].as_str().map(str::to_owned);
        if cursor.is_none() || page["records"].as_array().is_none_or(Vec::is_empty) {
            return Ok(counted);
        }
    }
}

async fn list_page(
    http: &reqwest::Client,
    pds: &SandboxPds,
    did: &str,
    cursor: Option<&str>,
) -> anyhow::Result<Value> {
    let mut url = format!(
        "{}/xrpc/com.atproto.repo.listRecords?repo={did}&collection={COLLECTION}&limit=100",
        pds.info().pds_url
    );
    if let Some(cursor) = cursor {
        url.push_str(&format!("&cursor={cursor}"));
    }
    let response = http.get(&url).send().await?.error_for_status()?;
    response
        .json()
        .await
        .context("listRecords answered no JSON")
}
