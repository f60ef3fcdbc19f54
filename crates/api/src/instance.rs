//! One running app per profile on Linux, without a D-Bus connection of its own: the first launch
//! holds a name in the abstract Unix socket namespace, and a later launch of the same profile
//! connects to it, hands over its arguments (the sign-in link the desktop opened it with) and
//! ends once the first has taken them. The name dies with the process that holds it, so a crash
//! leaves nothing stale behind.
//!
//! Abstract names are shared by every user of the machine, so each side checks the other by its
//! credentials (`SO_PEERCRED`): the first takes arguments only from its own user, and a later
//! launch hands its arguments (which may carry an authorization code) only to a process of its
//! own user. A name held by someone else is not ours: the launch then starts as an instance of
//! its own ([`Claim::Unclaimed`]), as it does where the socket cannot be made; the store's lock
//! still keeps two processes from running one account. What a launch sends is bounded
//! ([`MAX_HANDOVER`]) and read within [`SEND_TIME`]; a launch waits [`ANSWER_TIME`] for the
//! running instance to take it (its window may still be starting).

use std::os::linux::net::SocketAddrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::os::unix::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{UnixListener, UnixStream};

/// The most a later launch may send: its arguments as a JSON array of strings.
pub const MAX_HANDOVER: usize = 64 * 1024;
/// How long the running instance waits for a later launch's arguments, sent as it connects.
pub const SEND_TIME: Duration = Duration::from_secs(5);
/// How long a later launch waits for the running instance to take its arguments: an instance
/// that has just started serves them once its window is set up.
pub const ANSWER_TIME: Duration = Duration::from_secs(20);
/// What the first instance answers once it has taken the arguments.
const TAKEN: &[u8] = b"taken\n";

/// What claiming the profile's name came to.
#[derive(Debug)]
pub enum Claim {
    /// This process is the profile's instance: serve later launches with [`Instance::serve`].
    First(Instance),
    /// The running instance took this launch's arguments: this process should end.
    HandedOver,
    /// No instance could be held or reached (the name is held by another user, or the socket
    /// cannot be made): this process runs as an instance of its own. Says why.
    Unclaimed(String),
}

/// The held name: later launches of the profile connect to it.
#[derive(Debug)]
pub struct Instance {
    listener: UnixListener,
}

/// Claims `name` for this process, or hands `arguments` to the process that holds it. Call on
/// the runtime, before the window opens.
pub async fn claim(name: &str, arguments: &[String]) -> Claim {
    let address = match SocketAddr::from_abstract_name(name.as_bytes()) {
        Ok(address) => address,
        Err(error) => return Claim::Unclaimed(format!("the instance name is unusable: {error}")),
    };
    // Twice: the holder may end between our bind and our connect, freeing the name.
    for _ in 0..2 {
        match bind(&address) {
            Ok(listener) => return Claim::First(Instance { listener }),
            Err(error) if error.kind() == std::io::ErrorKind::AddrInUse => {}
            Err(error) => return Claim::Unclaimed(format!("cannot hold the instance: {error}")),
        }
        match hand_over(&address, arguments).await {
            Ok(()) => return Claim::HandedOver,
            Err(HandOverError::Gone) => continue,
            Err(HandOverError::Refused(why)) => return Claim::Unclaimed(why),
        }
    }
    Claim::Unclaimed("the instance came and went while this launch started".to_owned())
}

impl Instance {
    /// Serves later launches for as long as the process lives: each one's arguments, from a
    /// process of this user, sent whole within [`SEND_TIME`] and at most [`MAX_HANDOVER`]
    /// bytes, reach `on_launch`; anything else is logged (without its bytes) and dropped.
    pub async fn serve(self, on_launch: impl Fn(Vec<String>) + Send + Sync + 'static) {
        let on_launch = std::sync::Arc::new(on_launch);
        loop {
            let stream = match self.listener.accept().await {
                Ok((stream, _)) => stream,
                Err(error) => {
                    tracing::warn!(%error, "a later launch could not be taken");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let on_launch = std::sync::Arc::clone(&on_launch);
            tokio::spawn(async move {
                match take(stream).await {
                    Ok(arguments) => on_launch(arguments),
                    Err(why) => tracing::warn!(%why, "a later launch was refused"),
                }
            });
        }
    }
}

fn bind(address: &SocketAddr) -> std::io::Result<UnixListener> {
    let listener = std::os::unix::net::UnixListener::bind_addr(address)?;
    listener.set_nonblocking(true)?;
    UnixListener::from_std(listener)
}

fn connect(address: &SocketAddr) -> std::io::Result<UnixStream> {
    let stream = std::os::unix::net::UnixStream::connect_addr(address)?;
    stream.set_nonblocking(true)?;
    UnixStream::from_std(stream)
}

enum HandOverError {
    /// Nobody answers at the name any more.
    Gone,
    /// Someone answers, but this launch does not hand its arguments to them; says why.
    Refused(String),
}

/// Sends `arguments` to the holder of `address`, once it is known to be this user's, and waits
/// until it says it took them.
async fn hand_over(address: &SocketAddr, arguments: &[String]) -> Result<(), HandOverError> {
    let stream = connect(address).map_err(|_| HandOverError::Gone)?;
    same_user(&stream).map_err(HandOverError::Refused)?;
    let sent = serde_json::to_vec(arguments).map_err(|error| {
        HandOverError::Refused(format!("the arguments cannot be written: {error}"))
    })?;
    if sent.len() > MAX_HANDOVER {
        return Err(HandOverError::Refused(format!(
            "the arguments are longer than {MAX_HANDOVER} bytes"
        )));
    }
    let exchange = async {
        let mut stream = stream;
        stream.write_all(&sent).await?;
        stream.shutdown().await?;
        let mut answer = Vec::new();
        (&mut stream)
            .take(TAKEN.len() as u64)
            .read_to_end(&mut answer)
            .await?;
        Ok::<_, std::io::Error>(answer)
    };
    match tokio::time::timeout(ANSWER_TIME, exchange).await {
        Ok(Ok(answer)) if answer == TAKEN => Ok(()),
        Ok(Ok(_)) => Err(HandOverError::Gone),
        Ok(Err(error)) => Err(HandOverError::Refused(format!(
            "the running instance did not take the arguments: {error}"
        ))),
        Err(_) => Err(HandOverError::Refused(format!(
            "the running instance did not answer within {ANSWER_TIME:?}"
        ))),
    }
}

/// Reads a later launch's arguments from `stream` and tells it they were taken.
async fn take(mut stream: UnixStream) -> Result<Vec<String>, String> {
    same_user(&stream)?;
    let mut sent = Vec::new();
    let mut bounded = (&mut stream).take(MAX_HANDOVER as u64 + 1);
    match tokio::time::timeout(SEND_TIME, bounded.read_to_end(&mut sent)).await {
        Ok(Ok(_)) if sent.len() > MAX_HANDOVER => {
            return Err(format!("it sent more than {MAX_HANDOVER} bytes"));
        }
        Ok(Ok(_)) => {}
        Ok(Err(error)) => return Err(format!("it could not be read: {error}")),
        Err(_) => return Err(format!("it sent nothing whole within {SEND_TIME:?}")),
    }
    let arguments: Vec<String> = serde_json::from_slice(&sent)
        .map_err(|_| "what it sent is not a list of arguments".to_owned())?;
    stream
        .write_all(TAKEN)
        .await
        .map_err(|error| format!("it could not be answered: {error}"))?;
    Ok(arguments)
}

/// Whether the process at the other end of `stream` runs as this process's user.
fn same_user(stream: &UnixStream) -> Result<(), String> {
    let theirs = stream
        .peer_cred()
        .map_err(|error| format!("the other process is unknown: {error}"))?
        .uid();
    let ours = std::fs::metadata("/proc/self")
        .map_err(|error| format!("this process's user is unknown: {error}"))?
        .uid();
    if theirs == ours {
        Ok(())
    } else {
        Err(format!(
            "the other process runs as user {theirs}, not {ours}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name no other test (nor another run) holds.
    fn unique_name(test: &str) -> String {
        format!(
            "computer.socialweb.desk.test.{test}.{}.{:?}",
            std::process::id(),
            std::time::SystemTime::now()
        )
    }

    /// The first instance of `name`.
    async fn first_instance(name: &str) -> Instance {
        match claim(name, &[]).await {
            Claim::First(first) => first,
            other => panic!("the first claim holds the name: {other:?}"),
        }
    }

    /// `first` serving later launches; each one's arguments arrive on the receiver.
    fn serve(
        first: Instance,
    ) -> (
        tokio::task::JoinHandle<()>,
        tokio::sync::mpsc::UnboundedReceiver<Vec<String>>,
    ) {
        let (taken, heard) = tokio::sync::mpsc::unbounded_channel();
        let serving = tokio::spawn(first.serve(move |arguments| {
            taken.send(arguments).ok();
        }));
        (serving, heard)
    }

    fn arguments(words: &[&str]) -> Vec<String> {
        words.iter().map(|word| (*word).to_owned()).collect()
    }

    #[tokio::test]
    async fn a_later_launch_hands_its_arguments_to_the_first_and_is_told_they_were_taken() {
        let name = unique_name("hand-over");
        let (serving, mut heard) = serve(first_instance(&name).await);
        let link = "computer.socialweb.desk:/oauth/callback?code=abc&state=xyz";
        let later = claim(&name, &arguments(&["swdesk", link])).await;
        assert!(matches!(later, Claim::HandedOver), "{later:?}");
        assert_eq!(heard.recv().await, Some(arguments(&["swdesk", link])));
        serving.abort();
    }

    #[tokio::test]
    async fn a_launch_during_the_first_ones_start_is_taken_once_it_serves() {
        let name = unique_name("starting");
        let first = first_instance(&name).await;
        let later_name = name.clone();
        let later =
            tokio::spawn(async move { claim(&later_name, &arguments(&["swdesk", "early"])).await });
        // The first is still setting its window up: nothing accepts yet.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!later.is_finished(), "the later launch waits for an answer");
        let (serving, mut heard) = serve(first);
        assert!(matches!(later.await.unwrap(), Claim::HandedOver));
        assert_eq!(heard.recv().await, Some(arguments(&["swdesk", "early"])));
        serving.abort();
    }

    #[tokio::test]
    async fn the_name_is_free_again_once_its_holder_is_gone() {
        let name = unique_name("free-again");
        let first = first_instance(&name).await;
        drop(first);
        assert!(matches!(claim(&name, &[]).await, Claim::First(_)));
    }

    #[tokio::test]
    async fn what_is_not_a_whole_list_of_arguments_is_refused_and_the_instance_still_serves() {
        let name = unique_name("hostile");
        let (serving, mut heard) = serve(first_instance(&name).await);
        let address = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        for sent in [
            b"not json".to_vec(),
            b"{\"argv\": 1}".to_vec(),
            serde_json::to_vec(&["x".repeat(MAX_HANDOVER)]).unwrap(),
        ] {
            let mut stream = connect(&address).unwrap();
            stream.write_all(&sent).await.ok();
            stream.shutdown().await.ok();
            let mut answer = Vec::new();
            stream.read_to_end(&mut answer).await.ok();
            assert!(answer.is_empty(), "refused without a word: {answer:?}");
        }
        let later = claim(&name, &arguments(&["swdesk"])).await;
        assert!(matches!(later, Claim::HandedOver), "{later:?}");
        assert_eq!(heard.recv().await, Some(arguments(&["swdesk"])));
        assert!(heard.try_recv().is_err(), "nothing refused was delivered");
        serving.abort();
    }

    /// Set (by `cargo xtask test`, when it does not run as root) to leave out knowingly the
    /// checks that need a process of another user; unset, a run that cannot start one fails.
    const NO_SECOND_USER_ENV: &str = "SWDESK_NO_SECOND_USER";

    /// A process of another user (`nobody`) running `script` with the name as its argument, or
    /// `None` where none can be started (not root) and [`NO_SECOND_USER_ENV`] says to go on.
    fn as_another_user(script: &str, name: &str) -> Option<tokio::process::Child> {
        let root = std::fs::metadata("/proc/self").is_ok_and(|me| me.uid() == 0);
        if !root {
            assert!(
                std::env::var_os(NO_SECOND_USER_ENV).is_some(),
                "a process of another user can only be started as root (CI runs as root); set \
                 {NO_SECOND_USER_ENV}=1 to leave this check out knowingly"
            );
            eprintln!("{NO_SECOND_USER_ENV} is set: not checked against another user's process");
            return None;
        }
        let child = tokio::process::Command::new("python3")
            .args(["-c", script, name])
            .uid(NOBODY)
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("python3 starts as nobody");
        Some(child)
    }

    const NOBODY: u32 = 65534;

    /// Another user's process sending a launch's arguments to the name in `argv[1]`; prints what
    /// it was answered.
    const STRANGER_SENDS: &str = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect('\0' + sys.argv[1])
answer = b''
try:
    s.sendall(b'["swdesk", "stranger"]')
    s.shutdown(socket.SHUT_WR)
    answer = s.recv(64)
except OSError:
    pass
print('answered', repr(answer))
"#;

    /// Another user's process holding the name in `argv[1]`; prints how many bytes the first
    /// launch that connects sends it.
    const STRANGER_HOLDS: &str = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind('\0' + sys.argv[1])
s.listen(1)
print('holding', flush=True)
c, _ = s.accept()
c.settimeout(5)
print('got', len(c.recv(65536)), flush=True)
"#;

    #[tokio::test]
    async fn a_process_of_another_user_is_not_taken_and_hears_nothing() {
        let name = unique_name("stranger-sends");
        let (serving, mut heard) = serve(first_instance(&name).await);
        let Some(stranger) = as_another_user(STRANGER_SENDS, &name) else {
            return;
        };
        let said = stranger.wait_with_output().await.unwrap();
        let said = String::from_utf8_lossy(&said.stdout);
        assert_eq!(said.trim(), "answered b''", "refused without a word");
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(
            heard.try_recv().is_err(),
            "nothing of the stranger's was taken"
        );
        serving.abort();
    }

    #[tokio::test]
    async fn a_name_held_by_another_user_gets_no_arguments_and_the_launch_runs_on_its_own() {
        let name = unique_name("stranger-holds");
        let Some(mut stranger) = as_another_user(STRANGER_HOLDS, &name) else {
            return;
        };
        let mut said = tokio::io::BufReader::new(stranger.stdout.take().unwrap());
        let mut line = String::new();
        tokio::io::AsyncBufReadExt::read_line(&mut said, &mut line)
            .await
            .unwrap();
        assert_eq!(line.trim(), "holding");
        let link = "computer.socialweb.desk:/oauth/callback?code=secret&state=xyz";
        let later = claim(&name, &arguments(&["swdesk", link])).await;
        assert!(
            matches!(&later, Claim::Unclaimed(why) if why.contains(&format!("user {NOBODY}"))),
            "{later:?}"
        );
        line.clear();
        tokio::io::AsyncBufReadExt::read_line(&mut said, &mut line)
            .await
            .unwrap();
        assert_eq!(line.trim(), "got 0", "the stranger got none of the link");
    }

    #[tokio::test]
    async fn a_launch_more_than_the_bound_is_not_sent() {
        let name = unique_name("too-long");
        let _first = first_instance(&name).await;
        let long = "x".repeat(MAX_HANDOVER);
        let later = claim(&name, &arguments(&["swdesk", &long])).await;
        assert!(
            matches!(&later, Claim::Unclaimed(why) if why.contains("longer than")),
            "{later:?}"
        );
    }
}
