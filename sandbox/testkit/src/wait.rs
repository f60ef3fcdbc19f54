//! Waiting, with a deadline, for something that happens on its own time (a reconcile, a
//! peer's answer, a guest's event): each suite wraps [`eventually`] with the deadline its parts
//! need. The deadline is on tokio's clock, so a suite on paused time waits no real time.

use std::time::Duration;

/// How often a condition is looked at again.
const POLL: Duration = Duration::from_millis(50);

/// Polls `check` until it answers `Some`, and answers that; panics naming `what` once `within`
/// passed (on tokio's clock, so a suite on paused time waits no real time).
pub async fn eventually<T>(
    what: &str,
    within: Duration,
    mut check: impl AsyncFnMut() -> Option<T>,
) -> T {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} did not happen within {within:?}"
        );
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn answers_once_the_check_holds_and_fails_naming_what_it_waited_for() {
        let mut looks = 0;
        let found = eventually("the third look", Duration::from_secs(1), async || {
            looks += 1;
            (looks == 3).then_some(looks)
        })
        .await;
        assert_eq!(found, 3);
        let never = tokio::spawn(eventually("never", Duration::from_secs(1), async || {
            None::<()>
        }));
        let panic = never.await.expect_err("it gives up").into_panic();
        let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert_eq!(message, "never did not happen within 1s");
    }
}
