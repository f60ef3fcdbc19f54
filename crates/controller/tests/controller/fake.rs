//! The fake reconciler: answers each run of a key from a script (by default: done, await a
//! change), takes a fixed time per run, and records when every run started and ended and how
//! many ran at once.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use swdesk_controller::runtime::{Action, Backoff, ObjectKey, Reconciler};
use tokio::time::Instant;

/// What one run of a key answers.
#[derive(Debug, Clone, Copy)]
pub enum Reply {
    Done(Action),
    Fail,
    Panic,
}

/// The scripted error.
#[derive(Debug, thiserror::Error)]
#[error("scripted failure")]
pub struct Scripted;

#[derive(Debug, Clone)]
pub struct Fake {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    t0: Instant,
    takes: Duration,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    script: HashMap<String, VecDeque<Reply>>,
    starts: Vec<(String, u64)>,
    ends: Vec<(String, u64)>,
    running: HashMap<String, usize>,
    most_at_once_per_key: usize,
    most_at_once: usize,
}

impl Fake {
    /// A fake whose runs take no time.
    pub fn new() -> Self {
        Self::taking(Duration::ZERO)
    }

    /// A fake whose runs take `takes`.
    pub fn taking(takes: Duration) -> Self {
        let inner = Inner {
            t0: Instant::now(),
            takes,
            state: Mutex::default(),
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    /// When the fake was made: the test's time zero.
    pub fn t0(&self) -> Instant {
        self.inner.t0
    }

    /// The next runs of `name` answer `replies`, in order.
    pub fn script(&self, name: &str, replies: impl IntoIterator<Item = Reply>) {
        let mut state = self.state();
        state
            .script
            .entry(name.to_owned())
            .or_default()
            .extend(replies);
    }

    /// Every run's start, ordered by time then name.
    pub fn starts(&self) -> Vec<(String, u64)> {
        let mut starts = self.state().starts.clone();
        starts.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        starts
    }

    /// Every finished run's end, ordered by time then name.
    pub fn ends(&self) -> Vec<(String, u64)> {
        let mut ends = self.state().ends.clone();
        ends.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        ends
    }

    /// The gaps between the starts of `name`'s runs.
    pub fn gaps(&self, name: &str) -> Vec<Duration> {
        let starts: Vec<u64> = self
            .starts()
            .into_iter()
            .filter(|(key, _)| key == name)
            .map(|(_, at)| at)
            .collect();
        starts
            .windows(2)
            .map(|pair| Duration::from_millis(pair[1] - pair[0]))
            .collect()
    }

    /// The most runs of one key seen at once.
    pub fn most_at_once_per_key(&self) -> usize {
        self.state().most_at_once_per_key
    }

    /// The most runs of all keys seen at once.
    pub fn most_at_once(&self) -> usize {
        self.state().most_at_once
    }

    fn since_t0(&self) -> u64 {
        u64::try_from(self.inner.t0.elapsed().as_millis()).unwrap()
    }

    fn enter(&self, name: &str) {
        let at = self.since_t0();
        let mut state = self.state();
        state.starts.push((name.to_owned(), at));
        let of_key = {
            let count = state.running.entry(name.to_owned()).or_default();
            *count += 1;
            *count
        };
        let all: usize = state.running.values().sum();
        state.most_at_once_per_key = state.most_at_once_per_key.max(of_key);
        state.most_at_once = state.most_at_once.max(all);
    }

    fn leave(&self, name: &str) -> Reply {
        let at = self.since_t0();
        let mut state = self.state();
        state.ends.push((name.to_owned(), at));
        if let Some(count) = state.running.get_mut(name) {
            *count -= 1;
        }
        let next = state.script.get_mut(name).and_then(VecDeque::pop_front);
        next.unwrap_or(Reply::Done(Action::AwaitChange))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.state.lock().unwrap()
    }
}

impl Reconciler for Fake {
    type Error = Scripted;

    async fn reconcile(&self, key: &ObjectKey) -> Result<Action, Scripted> {
        let name = key.name.to_string();
        self.enter(&name);
        if !self.inner.takes.is_zero() {
            tokio::time::sleep(self.inner.takes).await;
        }
        match self.leave(&name) {
            Reply::Done(action) => Ok(action),
            Reply::Fail => Err(Scripted),
            Reply::Panic => panic!("scripted panic"),
        }
    }
}

/// The fake with an error policy of its own.
#[derive(Debug)]
pub struct WithBackoff(pub Fake, pub Backoff);

impl Reconciler for WithBackoff {
    type Error = Scripted;

    async fn reconcile(&self, key: &ObjectKey) -> Result<Action, Scripted> {
        self.0.reconcile(key).await
    }

    fn error_policy(&self, _key: &ObjectKey, _error: &Scripted, attempt: u32) -> Action {
        Action::backoff(&self.1, attempt)
    }
}
