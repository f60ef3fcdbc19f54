//! A private virtual X display (Xvfb) for the bench, started on a free display number and
//! stopped when dropped.

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
