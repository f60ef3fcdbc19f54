//! A deployed contract's secrets delivered to its guest: the guest's key found among its
//! bidder's reports about our receipt ([`crate::sealing`] decides which counts), each secret
//! not yet delivered at its version to that key read from the vault, sealed, written as a
//! `computer.socialweb.secret.sealed` record with a signed `market.event` carrying it, and
//! sent to the receipt's `submitEvent` service.
//!
//! Invariants: a value lives only between the vault read and the sealing, in memory; only
//! ciphertext is written or sent. What stops a delivery (no key yet, no value, the provider's
//! refusal) becomes the contract's secrets problem, every secret's at once, and is tried again
//! at the next look: the contract waits while anything is pending.

use std::sync::Arc;

use swdesk_auction::compute::ComputeContractObject;
use swdesk_auction::flow::{Held, RecordRole, record_key};
use swdesk_auction::records;
use swdesk_auction::secret::{GuestKey, SecretDelivery, SecretsStatus};
use swdesk_auction::trust::RecordCheck;
use swdesk_kernel::repo::{ProvenRecord, RecordRepo, StoredRecord};
use swdesk_kernel::secret::{SecretRef, SecretValue, SecretVault};
use swdesk_lexicon::com::publicdomainrelay::temp::market::event;
use swdesk_lexicon::computer::socialweb::secret::sealed;

use super::{RequesterMarket, Stop, record_value};
use crate::guest::Reported;
use crate::peers::Peers;
use crate::sealing::{guest_key, latest_key_report, seal};

/// What a contract with secrets waits for before its guest reported a key.
const NO_KEY: &str = "waiting for the guest to report its key";

impl<R: RecordRepo + std::fmt::Debug + 'static, P: Peers> RequesterMarket<R, P> {
    /// Brings `secrets` up to what `contract` wants of the guest `held`.
    pub(super) async fn deliver_secrets(
        &self,
        contract: &ComputeContractObject,
        held: &Held,
        secrets: &mut SecretsStatus,
    ) {
        let wanted = &contract.spec.secrets;
        if !wanted.is_empty()
            && let Err(problem) = self.deliver_pending(wanted, held, secrets).await
        {
            secrets.problem = Some(problem);
        }
        secrets.settle(wanted);
    }

    async fn deliver_pending(
        &self,
        wanted: &[SecretRef],
        held: &Held,
        secrets: &mut SecretsStatus,
    ) -> Result<(), String> {
        self.look_for_key(held, secrets).await?;
        let key = secrets.guest_key.clone().ok_or(NO_KEY)?;
        let vault = self
            .vault
            .clone()
            .ok_or("this build keeps no secret values")?;
        let pending: Vec<SecretRef> = secrets.undelivered(wanted).into_iter().cloned().collect();
        let mut problems = Vec::new();
        for secret in pending {
            match self.deliver(held, &key, &secret, &vault).await {
                Ok(delivery) => secrets.record_delivery(delivery),
                Err(problem) => problems.push(format!("{}: {problem}", secret.name)),
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }

    /// Takes the guest's latest reported key when it is newer than the one known.
    async fn look_for_key(&self, held: &Held, secrets: &mut SecretsStatus) -> Result<(), String> {
        let reports = self.guest_reports(held).await.map_err(Stop::into_text)?;
        let Some(report) = latest_key_report(&reports) else {
            return Ok(());
        };
        if secrets
            .guest_key
            .as_ref()
            .is_some_and(|known| known.event == report.event)
        {
            return Ok(());
        }
        let (record, checked) = self.key_record(report).await?;
        let key = guest_key(held, report, &record, checked, self.clock.now())?;
        secrets.guest_key = Some(key);
        Ok(())
    }

    /// The key record `report` names, with its proof; where the repo serves none, with how its
    /// own inline signatures bind to its author (none when they do not: [`guest_key`] refuses).
    async fn key_record(&self, report: &Reported) -> Result<(StoredRecord, RecordCheck), String> {
        let reference = &report.payload;
        let ProvenRecord { record, provenance } = self
            .fetch_proven(reference)
            .await
            .map_err(Stop::into_text)?;
        let mut checked = RecordCheck {
            provenance,
            bindings: Vec::new(),
            linked: Vec::new(),
        };
        if !checked.is_proven() {
            match self.author_bindings(&record).await {
                Ok(bindings) => checked.bindings = bindings,
                Err(Stop::Fail(why)) => tracing::info!(%why, "an unproven guest key"),
                Err(retry) => return Err(retry.into_text()),
            }
        }
        Ok((record, checked))
    }

    async fn deliver(
        &self,
        held: &Held,
        key: &GuestKey,
        secret: &SecretRef,
        vault: &Arc<dyn SecretVault>,
    ) -> Result<SecretDelivery, String> {
        let value = read(vault, &secret.keychain_entry).await?;
        let ciphertext = seal(&value, &key.recipient)?;
        drop(value);
        let at = self.clock.now();
        let record = records::sealed_secret(held, &key.recipient, secret, ciphertext, at);
        let value = record_value(&record).map_err(Stop::into_text)?;
        let sealed_at = self
            .put(
                sealed::NSID,
                record_key(at, RecordRole::SealedSecret),
                &value,
            )
            .await
            .map_err(Stop::into_text)?;
        let event_value =
            record_value(&records::event_about(held, &sealed_at)).map_err(Stop::into_text)?;
        self.publish_key().await.map_err(Stop::into_text)?;
        let signed = self.sign(&event_value, at).await.map_err(Stop::into_text)?;
        let event_at = self
            .put(
                event::NSID,
                record_key(at, RecordRole::SecretEvent),
                &signed,
            )
            .await
            .map_err(Stop::into_text)?;
        self.peers
            .submit_event(&held.submit_event, &event_at, &signed)
            .await
            .map_err(|error| format!("the provider did not take it: {}", error.message))?;
        Ok(SecretDelivery {
            name: secret.name.clone(),
            version: secret.version,
            recipient: key.recipient.clone(),
            record: sealed_at.uri,
            delivered_at: self.clock.now(),
        })
    }
}

/// The value under `entry`, read off the async runtime (a keychain blocks on D-Bus).
async fn read(vault: &Arc<dyn SecretVault>, entry: &str) -> Result<SecretValue, String> {
    let vault = Arc::clone(vault);
    let entry = entry.to_owned();
    tokio::task::spawn_blocking(move || vault.read(&entry))
        .await
        .map_err(|error| format!("the keychain read stopped: {error}"))??
        .ok_or_else(|| "the keychain holds no value for it".to_owned())
}
