//! The queue of one controller: which key runs next and when, as plain data with no clock of
//! its own (every call gets `now`), so its rules are tested without a runtime.
//!
//! A key is pending with up to two deadlines: a requeue (`schedule_after`, an [`Action`] or the
//! error policy; the earliest request wins) and a debounced burst of triggers (see
//! [`Debounce`]); it is due at the earlier of the two, and one run satisfies both.
//!
//! Invariants: a key is pending at most once (dedupe); a running key is never handed out, and
//! what it is scheduled for while it runs waits until it finishes, then runs once (so a trigger
//! during a run gives exactly one run after it); due keys are handed out earliest first, ties in
//! name order.
//!
//! [`Action`]: super::Action

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Duration;

use swdesk_kernel::name::Name;
use tokio::time::Instant;

use super::config::Debounce;

/// A burst of triggers of one key.
#[derive(Debug, Clone, Copy)]
struct Burst {
    first: Instant,
    due: Instant,
}

/// Why and when one key is to run.
#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    requeue_at: Option<Instant>,
    burst: Option<Burst>,
}

impl Pending {
    fn due(&self) -> Option<Instant> {
        let burst_due = self.burst.map(|burst| burst.due);
        [self.requeue_at, burst_due].into_iter().flatten().min()
    }
}

/// The pending and running keys of one controller.
#[derive(Debug, Default)]
pub(crate) struct Queue {
    pending: HashMap<Name, Pending>,
    /// The pending keys that are not running, by due time.
    due: BTreeSet<(Instant, Name)>,
    running: HashSet<Name>,
}

impl Queue {
    /// A trigger of `name` at `now`, debounced.
    pub(crate) fn trigger(&mut self, name: Name, now: Instant, debounce: Debounce) {
        self.update(name, |pending| {
            let first = pending.burst.map_or(now, |burst| burst.first);
            let due = later(now, debounce.delay).min(later(first, debounce.max));
            pending.burst = Some(Burst { first, due });
        });
    }

    /// A request to run `name` at `at` (or earlier, if something else asks for earlier).
    pub(crate) fn requeue(&mut self, name: Name, at: Instant) {
        self.update(name, |pending| {
            let earliest = pending.requeue_at.map_or(at, |known| known.min(at));
            pending.requeue_at = Some(earliest);
        });
    }

    /// Hands out the earliest key due at `now` and marks it running.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<Name> {
        let (due, _) = self.due.first()?;
        if *due > now {
            return None;
        }
        let (_, name) = self.due.pop_first()?;
        self.pending.remove(&name);
        self.running.insert(name.clone());
        Some(name)
    }

    /// `name` has finished running; what it was scheduled for meanwhile becomes due.
    pub(crate) fn finish(&mut self, name: &Name) {
        self.running.remove(name);
        if let Some(due) = self.pending.get(name).and_then(Pending::due) {
            self.due.insert((due, name.clone()));
        }
    }

    /// When the next key that is not running is due.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.due.first().map(|(due, _)| *due)
    }

    /// When `name` is due next, running or not.
    pub(crate) fn next_run(&self, name: &Name) -> Option<Instant> {
        self.pending.get(name).and_then(Pending::due)
    }

    /// Whether `name` is running.
    pub(crate) fn is_running(&self, name: &Name) -> bool {
        self.running.contains(name)
    }

    /// Every pending key, in name order.
    pub(crate) fn pending_names(&self) -> Vec<Name> {
        let mut names: Vec<Name> = self.pending.keys().cloned().collect();
        names.sort();
        names
    }

    /// Changes the pending entry of `name` and keeps the due index in step.
    fn update(&mut self, name: Name, change: impl FnOnce(&mut Pending)) {
        let pending = self.pending.entry(name.clone()).or_default();
        let before = pending.due();
        change(pending);
        let after = pending.due();
        if self.running.contains(&name) || before == after {
            return;
        }
        if let Some(before) = before {
            self.due.remove(&(before, name.clone()));
        }
        if let Some(after) = after {
            self.due.insert((after, name));
        }
    }
}

/// `delay` after `at`, or far in the future when that overflows.
pub(crate) fn later(at: Instant, delay: Duration) -> Instant {
    const FAR: Duration = Duration::from_secs(60 * 60 * 24 * 365 * 30);
    at.checked_add(delay)
        .or_else(|| at.checked_add(FAR))
        .unwrap_or(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(text: &str) -> Name {
        Name::parse(text).unwrap()
    }

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    fn debounce() -> Debounce {
        Debounce {
            delay: ms(100),
            max: ms(1000),
        }
    }

    #[test]
    fn a_key_queued_twice_is_pending_once() {
        let t0 = Instant::now();
        let mut queue = Queue::default();
        queue.trigger(name("a"), t0, debounce());
        queue.trigger(name("a"), t0, debounce());
        assert_eq!(queue.pop_due(t0 + ms(100)), Some(name("a")));
        assert_eq!(queue.pop_due(t0 + ms(100)), None);
    }

    #[test]
    fn due_keys_come_out_earliest_first_then_in_name_order() {
        let t0 = Instant::now();
        let mut queue = Queue::default();
        queue.requeue(name("c"), t0 + ms(5));
        queue.requeue(name("b"), t0 + ms(1));
        queue.requeue(name("a"), t0 + ms(1));
        let order: Vec<_> = std::iter::from_fn(|| queue.pop_due(t0 + ms(5))).collect();
        assert_eq!(order, [name("a"), name("b"), name("c")]);
    }

    #[test]
    fn a_running_key_waits_for_its_finish_before_it_is_due_again() {
        let t0 = Instant::now();
        let mut queue = Queue::default();
        queue.requeue(name("a"), t0);
        assert_eq!(queue.pop_due(t0), Some(name("a")));
        queue.requeue(name("a"), t0);
        assert_eq!(queue.pop_due(t0 + ms(10)), None);
        assert_eq!(queue.next_run(&name("a")), Some(t0));
        queue.finish(&name("a"));
        assert_eq!(queue.pop_due(t0 + ms(10)), Some(name("a")));
    }

    #[test]
    fn the_earliest_requeue_wins() {
        let t0 = Instant::now();
        let mut queue = Queue::default();
        queue.requeue(name("a"), t0 + ms(50));
        queue.requeue(name("a"), t0 + ms(20));
        queue.requeue(name("a"), t0 + ms(90));
        assert_eq!(queue.next_due(), Some(t0 + ms(20)));
    }

    #[test]
    fn a_trigger_does_not_delay_an_earlier_requeue() {
        let t0 = Instant::now();
        let mut queue = Queue::default();
        queue.requeue(name("a"), t0 + ms(10));
        queue.trigger(name("a"), t0, debounce());
        assert_eq!(queue.next_due(), Some(t0 + ms(10)));
    }

    #[test]
    fn an_overflowing_delay_lands_far_in_the_future() {
        let t0 = Instant::now();
        assert!(later(t0, Duration::MAX) > t0 + Duration::from_secs(60 * 60 * 24 * 365));
    }
}
