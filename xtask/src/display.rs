//! A private desktop session for the bench: a virtual X display (Xvfb) on a free display
//! number and a D-Bus session bus, as every desktop has (without one, GTK and WebKit wait on
//! the bus they cannot reach and first paints fall in two clusters, ~300 and ~800 ms, in the
//! bare window too). Both are stopped when dropped.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

#[derive(Debug)]
pub struct VirtualDisplay {
    pub name: String,
    server: Child,
}

impl VirtualDisplay {
    pub fn start() -> anyhow::Result<Self> {
        let number = (90..200)
            .find(|n| !Path::new(&format!("/tmp/.X{n}-lock")).exists())
            .context("no free X display number between :90 and :199")?;
        let name = format!(":{number}");
        let server = Command::new("Xvfb")
            .args([&name, "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start Xvfb (apt-get install xvfb)")?;
        let socket = format!("/tmp/.X11-unix/X{number}");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !Path::new(&socket).exists() {
            if Instant::now() > deadline {
                bail!("Xvfb {name} did not come up within 10 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(Self { name, server })
    }
}

impl Drop for VirtualDisplay {
    fn drop(&mut self) {
        self.server.kill().ok();
        self.server.wait().ok();
    }
}

/// A private D-Bus session bus.
#[derive(Debug)]
pub struct SessionBus {
    /// Its address, for `DBUS_SESSION_BUS_ADDRESS`.
    pub address: String,
    daemon: Child,
}

impl SessionBus {
    pub fn start() -> anyhow::Result<Self> {
        let mut daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start dbus-daemon (apt-get install dbus)")?;
        let stdout = daemon.stdout.take().context("dbus-daemon has no stdout")?;
        let mut address = String::new();
        BufReader::new(stdout).read_line(&mut address)?;
        let address = address.trim().to_owned();
        if address.is_empty() {
            daemon.kill().ok();
            daemon.wait().ok();
            bail!("dbus-daemon printed no address");
        }
        Ok(Self { address, daemon })
    }
}

impl Drop for SessionBus {
    fn drop(&mut self) {
        self.daemon.kill().ok();
        self.daemon.wait().ok();
    }
}
