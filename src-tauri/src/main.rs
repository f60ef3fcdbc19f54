//! The `swdesk` binary: answers `--help` and `--version` without opening a window; otherwise
//! records when the process started and hands over to the shell.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

/// What `swdesk --help` prints: the flags, the environment it reads, where it keeps things.
const HELP: &str = "\
Socialweb Desk: your socialweb.computer deployments on the desktop.

Usage: swdesk [--help | --version | LINK]

Opens the window. A second launch brings the running window forward and ends; given the
app's sign-in link (computer.socialweb.desk:/oauth/callback?…, which the desktop opens it
with), it hands the link to the sign-in waiting in the running window.

Options:
  -h, --help     print this help and exit
  -V, --version  print the version and exit

Environment:
  SWDESK_SANDBOX        a local sandbox's ready line (`cargo xtask run` sets it): talk to
                        that sandbox instead of the public network
  SWDESK_MARKET_RELAY   an https relay listing the compute market's bidders
  SWDESK_CLIENT_ID      the URL of the OAuth client metadata document to present (also in
                        a sandbox, whose PDS serves the project's own document)
  RUST_LOG              what to log (default: info)
  SWDESK_UPDATE_ENDPOINT, SWDESK_UPDATE_KEY
                        development builds only: where releases are announced, and the
                        public key their signatures are checked against

Files (Linux):
  ~/.local/share/computer.socialweb.desk/accounts/   one store file per account
  ~/.local/share/computer.socialweb.desk/logs/       a log file a day
  The session and the signing key live in the system keychain (Secret Service).
";

#[allow(clippy::print_stdout)] // --help and --version answer on stdout, as every CLI does
fn main() {
    let first = std::env::args().nth(1);
    match first.as_deref() {
        Some("-h" | "--help") => print!("{HELP}"),
        Some("-V" | "--version") => println!("swdesk {}", env!("CARGO_PKG_VERSION")),
        _ => swdesk_app::run(std::time::Instant::now()),
    }
}
