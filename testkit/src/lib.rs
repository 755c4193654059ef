//! What the end-to-end tests of the client and the server share: the real
//! binaries started as processes on loopback (a [`Server`], [`Client`]s,
//! clients under Xvfb), their output parsed, and temporary directories.
//!
//! The binaries are looked up next to the test executable (`target/<profile>/`),
//! so `cargo build --bins` must run first; `make test` does.

#![allow(missing_docs, reason = "test helpers whose names say what they are")]

pub mod browser;
pub mod clock;
pub mod guide;
mod tools;
mod xvfb;

pub use tools::{desync_diff, verified, verify};
pub use xvfb::{click_after_screenshot, under_xvfb, xvfb_command};

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use lockstep_protocol::{PlayerId, Replay};

/// A binary of this workspace, from the target directory the running test
/// was built in (the test executable lives in its `deps/`).
pub fn workspace_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its own path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test executable lives in target/<profile>/deps");
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --bins` first (make test does)",
        path.display()
    );
    path
}

/// The client binary.
pub fn client_bin() -> PathBuf {
    workspace_bin("lockstep-client")
}

/// The server binary.
pub fn server_bin() -> PathBuf {
    workspace_bin("lockstep-server")
}

/// The longest a server may take to print its first lines (its address,
/// its web door): a last guard, as a healthy server prints them at once.
/// On a 2-core machine loaded by a cross build, qemu and wine beside the
/// tests, a server once took more than the 10 s this was.
const STARTUP: Duration = Duration::from_secs(60);

/// A running server process, killed when dropped.
pub struct Server {
    pub child: Child,
    pub addr: String,
    pub fingerprint: String,
    lines: mpsc::Receiver<String>,
    pub seen: Vec<String>,
    /// The server's log (stderr), line by line.
    log: Arc<Mutex<Vec<String>>>,
    /// Where the server writes its replays.
    pub replays: TempDir,
    _identity: TempDir,
}

impl Server {
    pub fn start(players: u8, extra: &[&str]) -> Server {
        Server::start_at("127.0.0.1:0", players, extra)
    }

    /// A server listening on `listen` (with a fresh identity).
    pub fn start_at(listen: &str, players: u8, extra: &[&str]) -> Server {
        Server::start_binary(&server_bin(), listen, players, extra)
    }

    /// A server on loopback run from the binary `bin` (another build, for
    /// benchmarks that compare two).
    pub fn start_binary(bin: &Path, listen: &str, players: u8, extra: &[&str]) -> Server {
        Server::start_command(Command::new(bin), listen, players, extra)
    }

    /// A server started by `command`, which runs the server binary with
    /// the arguments added here (such as `ip netns exec NS lockstep-server`,
    /// to run it inside a network namespace).
    pub fn start_command(
        mut command: Command,
        listen: &str,
        players: u8,
        extra: &[&str],
    ) -> Server {
        let identity = TempDir::new("identity");
        let replays = TempDir::new("replays");
        command
            .args(["--listen", listen, "--players", &players.to_string()])
            .arg("--replay-dir")
            .arg(&replays.0);
        Server::launch(command, identity, replays, extra)
    }

    /// The server started again after `old` died (the caller killed it),
    /// on the same address with the same identity, going on with the game
    /// recorded in `replay` (`--resume`), so the clients that keep trying
    /// reconnect to it.
    pub fn resume(old: Server, replay: &Path, extra: &[&str]) -> Server {
        let mut args = vec!["--resume", replay.to_str().expect("a UTF-8 path")];
        args.extend(extra);
        Server::restart(old, &args)
    }

    /// The server started again after `old` died (the caller killed it),
    /// on the same address with the same identity and replay directory,
    /// with `args`.
    pub fn restart(mut old: Server, args: &[&str]) -> Server {
        let _ = old.child.kill();
        let _ = old.child.wait();
        let identity = std::mem::replace(&mut old._identity, TempDir(PathBuf::new()));
        let replays = std::mem::replace(&mut old.replays, TempDir(PathBuf::new()));
        let mut command = Command::new(server_bin());
        command
            .args(["--listen", &old.addr])
            .arg("--replay-dir")
            .arg(&replays.0);
        Server::launch(command, identity, replays, args)
    }

    fn launch(mut command: Command, identity: TempDir, replays: TempDir, extra: &[&str]) -> Server {
        let mut child = command
            .arg("--identity-dir")
            .arg(&identity.0)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("server starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = child.stderr.take().expect("piped stderr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let log_lines = log.clone();
        std::thread::spawn(move || {
            // Keep the log for assertions, and drain it so the server
            // never blocks on a full pipe.
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Ok(mut lines) = log_lines.lock() {
                    lines.push(line);
                }
            }
        });
        let first = lines
            .recv_timeout(STARTUP)
            .unwrap_or_else(|e| format!("nothing ({e})"));
        let Some(rest) = first.strip_prefix("listening on ") else {
            // Not left running behind the failed test.
            let _ = child.kill();
            let _ = child.wait();
            panic!("the server did not print its address first: {first:?}");
        };
        let (addr, fingerprint) = rest.split_once(" fingerprint=").expect("fingerprint");
        assert_eq!(fingerprint.len(), 64, "{first}");
        let (addr, fingerprint) = (addr.to_string(), fingerprint.to_string());
        Server {
            addr,
            fingerprint,
            child,
            lines,
            seen: vec![first],
            log,
            replays,
            _identity: identity,
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> Vec<String> {
        self.log
            .lock()
            .map(|lines| lines.clone())
            .unwrap_or_default()
    }

    /// Waits until the server's log has a line containing `needle`.
    pub fn wait_for_log(&self, needle: &str, timeout: Duration) -> String {
        let deadline = clock::now() + timeout;
        loop {
            if let Some(line) = self.log().into_iter().find(|l| l.contains(needle)) {
                return line;
            }
            if clock::now() >= deadline {
                panic!(
                    "the server never logged {needle:?}; its log:\n{}",
                    self.log().join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The replay file of the game this server records (its `recording
    /// path=...` line).
    pub fn recording_path(&mut self) -> PathBuf {
        let line = self.wait_for("recording path=", Duration::from_secs(20));
        PathBuf::from(line.trim_start_matches("recording path="))
    }

    /// The web door's `HOST:PORT`, from the first `browser url=` line.
    pub fn web_addr(&mut self) -> String {
        let line = self.wait_for("browser url=", STARTUP);
        line.trim_start_matches("browser url=http://")
            .trim_end_matches('/')
            .to_string()
    }

    /// The server's resident memory in KiB, from /proc.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("server status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .expect("VmRSS")
    }

    /// Waits for a stdout line containing `needle`; returns it.
    pub fn wait_for(&mut self, needle: &str, timeout: Duration) -> String {
        self.wait_for_line(needle, |line| line.contains(needle), timeout)
    }

    /// Waits for a stdout line that `matches`; returns it. `what` names
    /// the line for the failure message.
    pub fn wait_for_line(
        &mut self,
        what: &str,
        matches: impl Fn(&str) -> bool,
        timeout: Duration,
    ) -> String {
        let deadline = clock::now() + timeout;
        if let Some(line) = self.seen.iter().find(|l| matches(l)) {
            return line.clone();
        }
        loop {
            let left = deadline.saturating_duration_since(clock::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if matches(&line) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "server never printed {what:?}; it printed:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }
}

impl Server {
    /// Waits until the server has printed `count` stdout lines containing
    /// `needle` (a series of games prints one per game); returns them in
    /// order.
    pub fn wait_for_all(&mut self, needle: &str, count: usize, timeout: Duration) -> Vec<String> {
        let deadline = clock::now() + timeout;
        loop {
            let found: Vec<String> = self
                .seen
                .iter()
                .filter(|l| l.contains(needle))
                .cloned()
                .collect();
            if found.len() >= count {
                return found;
            }
            let left = deadline.saturating_duration_since(clock::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => panic!(
                    "server printed {needle:?} {} times, not {count}; it printed:\n{}",
                    found.len(),
                    self.seen.join("\n")
                ),
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client process, killed when dropped with every process it started
/// (it leads its own process group: the shell of [`xvfb_command`], its
/// display and the client on it go together).
pub struct Client {
    pub child: Child,
    pub name: String,
    /// The process has been waited for: its id, and its group's, may
    /// belong to another process now.
    reaped: bool,
}

impl Client {
    pub fn headless_bot(server: &Server, name: &str, seed: u64, ticks: u32) -> Client {
        Client::spawn(name, &mut headless_bot(server, name, seed, ticks))
    }

    pub fn spawn(name: &str, command: &mut Command) -> Client {
        let key = lockstep_protocol::KNOWN_SERVERS_ENV;
        if !command.get_envs().any(|(k, _)| k == key) {
            command.env(key, known_servers_file());
        }
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(command, 0);
        let child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("client starts");
        Client {
            child,
            name: name.to_string(),
            reaped: false,
        }
    }

    /// Waits for the process to exit; after `timeout` kills it and
    /// everything it started, and fails with what it had printed.
    pub fn finish(mut self, timeout: Duration) -> Finished {
        let deadline = clock::now() + timeout;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                self.reaped = true;
                break status;
            }
            if clock::now() >= deadline {
                self.kill();
                let (stdout, stderr) = self.output();
                panic!(
                    "client {} did not finish within {timeout:?}\nstdout: {stdout}\nstderr: {stderr}",
                    self.name
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let (stdout, stderr) = self.output();
        Finished {
            name: self.name.clone(),
            success: status.success(),
            stdout,
            stderr,
        }
    }

    /// Everything the process printed; it has exited.
    fn output(&mut self) -> (String, String) {
        let mut stdout = String::new();
        let mut stderr = String::new();
        if let Some(mut out) = self.child.stdout.take() {
            let _ = out.read_to_string(&mut stdout);
        }
        if let Some(mut err) = self.child.stderr.take() {
            let _ = err.read_to_string(&mut stderr);
        }
        (stdout, stderr)
    }

    /// Kills the process and its process group, and reaps it.
    fn kill(&mut self) {
        if self.reaped {
            return;
        }
        self.reaped = true;
        #[cfg(unix)]
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A client that exited.
#[derive(Debug)]
pub struct Finished {
    pub name: String,
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    /// The `final tick=N hash=H` line, parsed.
    pub fn final_line(&self) -> (u32, String) {
        assert!(
            self.success,
            "{} failed:\nstdout: {}\nstderr: {}",
            self.name, self.stdout, self.stderr
        );
        let last = self.stdout.lines().last().unwrap_or_default();
        let rest = last
            .strip_prefix("final tick=")
            .unwrap_or_else(|| panic!("{}: last line is {last:?}", self.name));
        let (tick, hash) = rest.split_once(" hash=").expect("hash field");
        assert_eq!(hash.len(), 16, "{last}");
        (tick.parse().expect("tick number"), hash.to_string())
    }

    /// Every `final tick=N hash=H` line, parsed, in order: one per game
    /// of a client that played `--games`.
    pub fn final_lines(&self) -> Vec<(u32, String)> {
        assert!(
            self.success,
            "{} failed:\nstdout: {}\nstderr: {}",
            self.name, self.stdout, self.stderr
        );
        self.stdout
            .lines()
            .filter_map(|line| {
                let rest = line.strip_prefix("final tick=")?;
                let (tick, hash) = rest.split_once(" hash=")?;
                Some((tick.parse().ok()?, hash.to_string()))
            })
            .collect()
    }

    /// The last `final` line, parsed: a page's, which prints more after
    /// it.
    pub fn last_final_line(&self) -> (u32, String) {
        self.final_lines().pop().unwrap_or_else(|| {
            panic!(
                "{} printed no final line:\n{}\n{}",
                self.name, self.stdout, self.stderr
            )
        })
    }

    /// A `key=value` field of the `stats` line.
    pub fn stat(&self, key: &str) -> u64 {
        let line = self
            .stdout
            .lines()
            .find(|l| l.starts_with("stats "))
            .unwrap_or_else(|| panic!("{}: no stats line in {:?}", self.name, self.stdout));
        field(line, key)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{}: no {key} in {line:?}", self.name))
    }
}

/// Runs the tests of one test binary that time real processes one at a
/// time: hold the guard for the whole test. Two at once on the two cores
/// of a CI machine turn contention into stalls (and a browser's page,
/// starved, stalls its game). A test that panicked does not stop the next.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Sends `signal` (`"KILL"`, `"STOP"`, `"CONT"`, `"TERM"`) to process
/// `pid` with kill(1); panics if it cannot be sent.
pub fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{signal} {pid}: {status}");
}

/// The replay in `file`, read up to any damage.
pub fn read_replay(file: &Path) -> Replay {
    let file = std::fs::File::open(file).expect("the replay opens");
    Replay::read(file).expect("a replay").replay
}

/// Waits until the replay at `path`, which a running server writes,
/// holds at least `ticks` bundles: the game has run that far. Fails after
/// a minute.
pub fn wait_for_bundles(path: &Path, ticks: usize) {
    wait_for_bundles_within(path, ticks, Duration::from_secs(60));
}

/// [`wait_for_bundles`] for games longer than a minute (the benches'):
/// fails after `limit`.
pub fn wait_for_bundles_within(path: &Path, ticks: usize, limit: Duration) {
    let deadline = clock::now() + limit;
    while read_replay(path).bundles.len() < ticks {
        assert!(
            clock::now() < deadline,
            "the game never reached tick {ticks}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The slot of the player called `name` in `replay`'s roster.
pub fn slot_of(replay: &Replay, name: &str) -> PlayerId {
    replay
        .header
        .roster
        .iter()
        .find(|r| r.name == name)
        .map(|r| r.id)
        .unwrap_or_else(|| panic!("{name} is not in the replay's roster"))
}

/// The last line a finished process wrote on stdout.
pub fn last_line(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .last()
        .unwrap_or_default()
        .to_string()
}

/// The value of the `key=value` field of an output line (the server's
/// event lines, the client's `stats` line).
pub fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
}

/// Waits for every client to exit, each within `timeout` ([`Client::finish`]),
/// and checks that they all ended on the same `final tick=N hash=H` line.
/// Returns what each printed, in order, and that line.
pub fn finish_in_lockstep(
    clients: Vec<Client>,
    timeout: Duration,
) -> (Vec<Finished>, (u32, String)) {
    let finished: Vec<Finished> = clients.into_iter().map(|c| c.finish(timeout)).collect();
    let ends: Vec<(u32, String)> = finished.iter().map(Finished::final_line).collect();
    assert!(
        ends.iter().all(|end| *end == ends[0]),
        "the clients disagree: {ends:?}"
    );
    let end = ends[0].clone();
    (finished, end)
}

/// A windowed client under Xvfb joining `server` as `name`, with the
/// server's fingerprint pinned and `extra` flags.
pub fn windowed(server: &Server, name: &str, extra: &[&str]) -> Client {
    let mut args = vec![
        "--connect",
        &server.addr,
        "--fingerprint",
        &server.fingerprint,
        "--name",
        name,
    ];
    args.extend(extra);
    under_xvfb(name, &args)
}

/// A headless client command joining `server` as `name`, with the
/// server's fingerprint pinned; add the rest and [`Client::spawn`] it.
pub fn headless(server: &Server, name: &str) -> Command {
    headless_of(&client_bin(), server, name)
}

/// [`headless`] for the client binary `bin` (one built with other games,
/// as `flock-client`).
pub fn headless_of(bin: &Path, server: &Server, name: &str) -> Command {
    let mut command = joining(bin, server, name);
    command.arg("--headless");
    command
}

/// A command of the client binary `bin` joining `server` as `name`, in a
/// window unless told `--headless`.
pub fn joining(bin: &Path, server: &Server, name: &str) -> Command {
    let mut command = Command::new(bin);
    command
        .args([
            "--connect",
            &server.addr,
            "--fingerprint",
            &server.fingerprint,
        ])
        .args(["--name", name]);
    command
}

/// A headless bot command joining `server` as `name`, playing `seed`'s
/// inputs until tick `ticks`; add flags and [`Client::spawn`] it.
pub fn headless_bot(server: &Server, name: &str, seed: u64, ticks: u32) -> Command {
    headless_bot_of(&client_bin(), server, name, seed, ticks)
}

/// [`headless_bot`] for the client binary `bin` (one built with other
/// games, as `flock-client`).
pub fn headless_bot_of(bin: &Path, server: &Server, name: &str, seed: u64, ticks: u32) -> Command {
    let mut command = headless_of(bin, server, name);
    command.args(["--bot", &seed.to_string(), "--ticks", &ticks.to_string()]);
    command
}

/// A known-servers file of this test run, so tests never touch the
/// user's own (`~/.local/share/lockstep/known_servers`).
pub fn known_servers_file() -> PathBuf {
    std::env::temp_dir().join(format!(
        "lockstep-test-known-servers-{}",
        std::process::id()
    ))
}

/// A directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(label: &str) -> TempDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("lockstep-test-{label}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
