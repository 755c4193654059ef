//! The run's driver: starts the server, the bots, their proxies and the
//! spectator, does each fault of the schedule once the game reaches its
//! tick ([`crate::faults`]), waits for the end, verifies the replay and
//! hands what it saw to [`crate::checks`].
//!
//! Every wait is for something the processes say (a line, a tick in the
//! replay, an exit), polled with a generous bound; the only waits for
//! time itself are the faults' own lengths (a frozen bot's pause, a bad
//! link's window, a spectator's stay, a dead server's downtime).

use std::io::Write;
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::checks::{Ending, Judgement};
use crate::figures::{self, Figures};
use crate::history::Entry;
use crate::io::clock::Clock;
use crate::io::peer::{self, NotReady};
use crate::io::process::{Proc, ProcError};
use crate::io::proxy::LinkProxy;
use crate::io::tail::ReplayTail;
use crate::peers::{self, Peer};
use crate::said::{self, Said, Stream, SERVER};
use crate::schedule::{Bot, Fault, Schedule, ScheduleError, TICK_RATE};

/// Why a run asked to end early stopped.
pub(crate) const STOPPED: &str = "stopped by a signal";

/// How often the run reads what the processes said.
const POLL: Duration = Duration::from_millis(100);

/// How often the server's peak memory is sampled.
const MEMORY_EVERY: Duration = Duration::from_secs(1);

/// The longest a process gets to say something it is expected to say
/// soon (its address, a rejoin, a desync): far beyond what it takes on a
/// loaded machine, short enough that a run that lost its way ends.
pub(crate) const PATIENCE: Duration = Duration::from_secs(90);

/// Milliseconds of silence after which the server drops a player: above a
/// `stop` fault's 10 s, so a frozen bot is stood in for, not dropped by
/// the server's own rule.
pub(crate) const DROP_TIMEOUT_MS: &str = "20000";

/// Seconds of game between two verified snapshots: a bot that rejoins
/// starts from one at most two seconds old.
const SNAPSHOT_SECS: &str = "2";

/// Milliseconds a late input is waited for before it is stood in for: low
/// enough that a frozen bot's stand-ins start at once.
const LAGGARD_MS: &str = "20";

/// Seconds a client keeps trying to reconnect: longer than any server
/// restart of the run takes.
const RECONNECT_SECS: &str = "300";

/// Seconds a resumed server waits for its players: generous, so a slow
/// machine's bot is not dropped for being slow to reconnect.
const RESUME_WAIT_SECS: &str = "120";

/// What a run is asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// The seed: the schedule, the bots' inputs, the world.
    pub seed: u64,
    /// Minutes of game.
    pub minutes: u32,
    /// Where `lockstep-server` and `lockstep-client` are.
    pub bin_dir: PathBuf,
    /// Keep the run's files (logs, replay, identity) in this directory
    /// instead of a temporary one removed at the end.
    pub keep: Option<PathBuf>,
    /// A browser peer plays too: the server's page (`make web` builds it
    /// into `web` beside `bin_dir`) in a headless Chromium.
    pub browser: bool,
    /// An aarch64 bot plays too: this aarch64 build of `lockstep-client`,
    /// under qemu-user.
    pub aarch64: Option<PathBuf>,
    /// Set (by a SIGTERM or SIGINT handler) to end the run early: it stops
    /// waiting, judges what it saw and stops every process it started.
    pub stop: Arc<AtomicBool>,
}

impl Options {
    /// The other machines asked for, in the order they join.
    pub fn peers(&self) -> Vec<Peer> {
        Peer::ALL
            .into_iter()
            .filter(|peer| match peer {
                Peer::Browser => self.browser,
                Peer::Aarch64 => self.aarch64.is_some(),
            })
            .collect()
    }
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The schedule cannot be made for these options.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// A binary is missing.
    #[error("{} is missing (build it: cargo build --bins)", .0.display())]
    Missing(PathBuf),
    /// The run's directory could not be made.
    #[error("cannot create {}: {source}", path.display())]
    Dir {
        /// The directory.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A peer asked for cannot play here.
    #[error(transparent)]
    NotReady(#[from] NotReady),
    /// A relative path could not be made absolute (no current directory).
    #[error("cannot resolve {}: {source}", path.display())]
    Resolve {
        /// The path as given.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

/// One of the six bots and its latest process.
pub(crate) struct Player {
    pub(crate) bot: Bot,
    /// Where it connects: the server, or its proxy.
    pub(crate) via: SocketAddr,
    pub(crate) proc: Option<Proc>,
    /// Processes started for it so far.
    pub(crate) generation: u32,
    /// Where in the timeline its latest process started.
    pub(crate) since: usize,
}

/// A run in progress.
pub(crate) struct Run<'a> {
    pub(crate) schedule: Schedule,
    pub(crate) clock: Clock,
    out: &'a mut dyn Write,
    pub(crate) dir: PathBuf,
    server_bin: PathBuf,
    pub(crate) client_bin: PathBuf,
    pub(crate) addr: SocketAddr,
    pub(crate) fingerprint: String,
    pub(crate) server: Option<Proc>,
    pub(crate) server_generation: u32,
    pub(crate) players: Vec<Player>,
    pub(crate) proxies: Vec<(Bot, LinkProxy)>,
    pub(crate) watcher: Option<Proc>,
    /// The other machines asked for.
    pub(crate) peers: Vec<Peer>,
    /// The aarch64 client, when it plays.
    pub(crate) aarch64: Option<PathBuf>,
    /// The other machines' processes, once started.
    pub(crate) peer_procs: Vec<(Peer, Proc)>,
    /// Second spectators started so far.
    pub(crate) guests: u32,
    /// The second spectator while it watches.
    pub(crate) guest: Option<Proc>,
    /// Processes replaced or gone, read until they have exited.
    pub(crate) retired: Vec<Proc>,
    pub(crate) timeline: Vec<Said>,
    pub(crate) replay: Option<ReplayTail>,
    /// When the game started, on the run's clock.
    pub(crate) started: Duration,
    pub(crate) ending: Ending,
    /// What the run measures for the record.
    pub(crate) figures: Figures,
    /// When the server's memory was last sampled.
    sampled: Duration,
    /// Set when the run is asked to end early.
    stop: Arc<AtomicBool>,
}

/// Runs the chaos run `options` describes, writing its history to `out`
/// as it goes; returns its judgement (the summary line and every failed
/// check).
pub fn run(options: &Options, out: &mut dyn Write) -> Result<Judgement, RunError> {
    let schedule = Schedule::plan(options.seed, options.minutes)?;
    // The processes run in the run's directory: every path they are
    // given is absolute.
    let server_bin = absolute(&binary(&options.bin_dir, "lockstep-server")?)?;
    let client_bin = absolute(&binary(&options.bin_dir, "lockstep-client")?)?;
    if options.browser {
        // Where the server looks for its page: `web` beside the binaries'
        // directory (`target/web` for `target/debug`).
        let bins = server_bin.parent().unwrap_or(Path::new("/"));
        peer::browser_ready(&bins.parent().unwrap_or(bins).join("web"))?;
    }
    let aarch64 = match &options.aarch64 {
        Some(client) => {
            let client = absolute(client)?;
            peer::aarch64_ready(&client)?;
            Some(client)
        }
        None => None,
    };
    let dir = match &options.keep {
        Some(dir) => absolute(dir)?,
        None => std::env::temp_dir().join(format!(
            "lockstep-chaos-{}-{}",
            options.seed,
            std::process::id()
        )),
    };
    for sub in ["", "logs", "identity", "replays", "dumps"] {
        let path = dir.join(sub);
        std::fs::create_dir_all(&path).map_err(|source| RunError::Dir { path, source })?;
    }
    let _ = writeln!(
        out,
        "chaos seed={} minutes={}: {} faults, files in {}",
        schedule.seed,
        schedule.minutes,
        schedule.faults.len(),
        dir.display()
    );
    let _ = write!(out, "{schedule}");
    let ending = Ending {
        seed: schedule.seed,
        minutes: schedule.minutes,
        ticks: schedule.ticks(),
        peers: options.peers(),
        ..Ending::default()
    };
    let mut run = Run {
        schedule,
        clock: Clock::start(),
        out,
        dir: dir.clone(),
        server_bin,
        client_bin,
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        fingerprint: String::new(),
        server: None,
        server_generation: 0,
        players: Vec::new(),
        proxies: Vec::new(),
        watcher: None,
        peers: options.peers(),
        aarch64,
        peer_procs: Vec::new(),
        guests: 0,
        guest: None,
        retired: Vec::new(),
        timeline: Vec::new(),
        replay: None,
        started: Duration::ZERO,
        ending,
        figures: Figures::default(),
        sampled: Duration::ZERO,
        stop: Arc::clone(&options.stop),
    };
    if let Err(why) = run.play() {
        run.ending.stopped = Some(why);
    }
    let judgement = run.conclude();
    run.stop_peers();
    drop(run);
    if options.keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(judgement)
}

/// `path` from the root: as given when it is, else joined to the
/// current directory.
fn absolute(path: &Path) -> Result<PathBuf, RunError> {
    std::path::absolute(path).map_err(|source| RunError::Resolve {
        path: path.to_path_buf(),
        source,
    })
}

/// `name` in `dir`, if it is there.
fn binary(dir: &Path, name: &str) -> Result<PathBuf, RunError> {
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if path.is_file() {
        Ok(path)
    } else {
        Err(RunError::Missing(path))
    }
}

/// A port free on loopback now, for the server to keep across its
/// restarts: on UDP for QUIC, and with the same number on TCP for its web
/// door.
fn free_port() -> Result<u16, String> {
    let mut last = String::new();
    for _ in 0..20 {
        let port = UdpSocket::bind("127.0.0.1:0")
            .and_then(|s| s.local_addr())
            .map(|a| a.port())
            .map_err(|e| format!("no free UDP port on 127.0.0.1: {e}"))?;
        match TcpListener::bind(("127.0.0.1", port)) {
            Ok(_) => return Ok(port),
            Err(e) => last = format!("127.0.0.1:{port} is taken on TCP: {e}"),
        }
    }
    Err(format!("no port free on both UDP and TCP: {last}"))
}

impl Run<'_> {
    /// Writes one line of the history.
    pub(crate) fn say(&mut self, line: &str) {
        let _ = writeln!(self.out, "{line}");
        let _ = self.out.flush();
    }

    /// The whole game: set-up, faults, end.
    fn play(&mut self) -> Result<(), String> {
        let port = free_port()?;
        self.addr = SocketAddr::from(([127, 0, 0, 1], port));
        self.start_server(None)?;
        for bot in Bot::all() {
            let via = if bot.is_proxied() {
                let proxy = LinkProxy::start(self.addr, self.clock)
                    .map_err(|e| format!("cannot start the proxy of {bot}: {e}"))?;
                let via = proxy.addr();
                self.proxies.push((bot, proxy));
                via
            } else {
                self.addr
            };
            self.players.push(Player {
                bot,
                via,
                proc: None,
                generation: 0,
                since: 0,
            });
            self.start_bot(bot, &[]).map_err(|e| e.to_string())?;
        }
        for peer in self.peers.clone() {
            self.start_peer(peer).map_err(|e| e.to_string())?;
        }
        let start = self
            .wait_line(0, PATIENCE, |s| s.is_event("start"))
            .ok_or("the game never started (no `start players=` line)")?;
        self.started = self.clock.now();
        let recording = self
            .wait_line(0, PATIENCE, |s| s.is_event("recording"))
            .ok_or("the server never said where it records the game")?;
        let path = said::field(&recording.line, "path")
            .unwrap_or_default()
            .to_string();
        self.replay = Some(ReplayTail::new(Path::new(&path)));
        self.say(&format!("started: {}; recording to {path}", start.line));
        let command = self.client_command("watcher", self.addr, &["--spectate"]);
        self.watcher = Some(
            Proc::spawn("watcher", "watcher", command, &self.dir.join("logs"))
                .map_err(|e| e.to_string())?,
        );
        let faults = self.schedule.faults.clone();
        for (i, planned) in faults.iter().enumerate() {
            let number = i + 1;
            let last = self.schedule.last_fault_tick();
            let reached = self.wait_for_tick(planned.tick)?;
            if reached > last {
                let why = format!("the game was at tick {reached}, past tick {last}");
                self.say(&format!("fault {number} not done: {why}"));
                self.ending.not_done.push((number, planned.fault, why));
                continue;
            }
            let entry = self.fault(number, planned.fault);
            self.say(&entry.to_string());
            self.ending.entries.push(entry);
        }
        self.finish()
    }

    /// Waits until the game has bundled `tick` ticks; the tick reached.
    /// The game must keep moving: a bound of three (six with peers) times
    /// the game time left to it, plus [`PATIENCE`].
    fn wait_for_tick(&mut self, tick: u32) -> Result<u32, String> {
        let limit = self.bound(tick);
        let reached = self.wait(limit, |run| {
            let now = run.tick();
            (now >= tick).then_some(now)
        });
        reached.ok_or_else(|| {
            if self.stopped() {
                return STOPPED.to_string();
            }
            format!(
                "the game never reached tick {tick}; it stands at {}",
                self.tick()
            )
        })
    }

    /// How long the game may take from here to `tick`: the game time
    /// left, times [`peers::patience_factor`], plus [`PATIENCE`].
    pub(crate) fn bound(&self, tick: u32) -> Duration {
        let secs = u64::from(tick.saturating_sub(self.tick()) / TICK_RATE);
        Duration::from_secs(secs * peers::patience_factor(&self.peers)) + PATIENCE
    }

    /// Whether the run was asked to end early.
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The game's tick: ticks bundled in the replay.
    pub(crate) fn tick(&self) -> u32 {
        self.replay.as_ref().map_or(0, ReplayTail::ticks)
    }

    /// Real time since the game started.
    pub(crate) fn game_time(&self) -> Duration {
        self.clock.now().saturating_sub(self.started)
    }

    /// The server's arguments besides `--resume`.
    fn server_args(&self) -> Vec<String> {
        let dir = |sub: &str| self.dir.join(sub).display().to_string();
        let mut args: Vec<String> = vec![
            "--listen".into(),
            self.addr.to_string(),
            "--identity-dir".into(),
            dir("identity"),
            "--replay-dir".into(),
            dir("replays"),
        ];
        for (flag, value) in [
            ("--drop-timeout-ms", DROP_TIMEOUT_MS),
            ("--snapshot-secs", SNAPSHOT_SECS),
            ("--laggard-ms", LAGGARD_MS),
            ("--speed-control", "on"),
        ] {
            args.push(flag.into());
            args.push(value.into());
        }
        args.push("--no-advertise".into());
        if !self.peers.contains(&Peer::Browser) {
            // Its web door has the QUIC port's number otherwise.
            args.push("--no-web".into());
        }
        args
    }

    /// Starts the server (to resume the game in `resume`, if given) and
    /// waits for its address; the fingerprint must stay the one the
    /// clients pinned.
    pub(crate) fn start_server(&mut self, resume: Option<&Path>) -> Result<(), String> {
        let mut command = Command::new(&self.server_bin);
        command.current_dir(&self.dir).args(self.server_args());
        match resume {
            Some(replay) => {
                command.arg("--resume").arg(replay);
                command.args(["--resume-wait-secs", RESUME_WAIT_SECS]);
            }
            None => {
                let players = Bot::all().count() + self.peers.len();
                command.args(["--players", &players.to_string()]);
                command.args(["--seed", &self.schedule.seed.to_string()]);
            }
        }
        self.server_generation += 1;
        let file = format!("server.{}", self.server_generation);
        let from = self.timeline.len();
        let proc = Proc::spawn(SERVER, &file, command, &self.dir.join("logs"))
            .map_err(|e| e.to_string())?;
        self.server = Some(proc);
        let line = self
            .wait_line(from, PATIENCE, |s| {
                s.who == SERVER && s.stream == Stream::Out && said::listening(&s.line).is_some()
            })
            .ok_or("the server never said where it listens")?;
        let (_, fingerprint) = said::listening(&line.line).unwrap_or_default();
        if self.fingerprint.is_empty() {
            self.fingerprint = fingerprint.to_string();
        } else if fingerprint != self.fingerprint {
            return Err(format!(
                "the restarted server's fingerprint is {fingerprint}, not {}",
                self.fingerprint
            ));
        }
        Ok(())
    }

    /// A client command joining the game as `name` through `via`.
    pub(crate) fn client_command(&self, name: &str, via: SocketAddr, extra: &[&str]) -> Command {
        self.client_args(Command::new(&self.client_bin), name, via, extra)
    }

    /// `command` given a client's arguments to join as `name` through
    /// `via`.
    pub(crate) fn client_args(
        &self,
        mut command: Command,
        name: &str,
        via: SocketAddr,
        extra: &[&str],
    ) -> Command {
        command
            .current_dir(&self.dir)
            .env("LOCKSTEP_KNOWN_SERVERS", self.dir.join("known_servers"))
            .args(["--connect", &via.to_string()])
            .args(["--fingerprint", &self.fingerprint])
            .args(["--name", name, "--headless"])
            .args(["--ticks", &self.schedule.ticks().to_string()])
            .args(["--reconnect-secs", RECONNECT_SECS])
            .arg("--dump-dir")
            .arg(self.dir.join("dumps"))
            .args(extra);
        command
    }

    /// Starts `bot` (again: its old process is SIGKILLed first) with
    /// `extra` flags.
    pub(crate) fn start_bot(&mut self, bot: Bot, extra: &[&str]) -> Result<(), ProcError> {
        let from = self.timeline.len();
        let seed = self
            .schedule
            .seed
            .wrapping_mul(16)
            .wrapping_add(u64::from(bot.0));
        let index = self
            .players
            .iter()
            .position(|p| p.bot == bot)
            .unwrap_or_default();
        if let Some(mut old) = self.players[index].proc.take() {
            old.kill();
            self.retired.push(old);
        }
        let player = &self.players[index];
        let name = bot.to_string();
        let mut args = vec!["--bot".to_string(), seed.to_string()];
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let command = self.client_command(&name, player.via, &args);
        let generation = player.generation + 1;
        let proc = Proc::spawn(
            &name,
            &format!("{name}.{generation}"),
            command,
            &self.dir.join("logs"),
        )?;
        let player = &mut self.players[index];
        player.proc = Some(proc);
        player.generation = generation;
        player.since = from;
        Ok(())
    }

    /// Reads everything the processes said since the last call, and the
    /// replay's new records.
    pub(crate) fn pump(&mut self) {
        let at = self.clock.now();
        let mut heard: Vec<(String, Stream, String)> = Vec::new();
        let live = self
            .server
            .iter_mut()
            .chain(self.players.iter_mut().filter_map(|p| p.proc.as_mut()))
            .chain(self.watcher.iter_mut())
            .chain(self.peer_procs.iter_mut().map(|(_, proc)| proc))
            .chain(self.guest.iter_mut());
        for proc in live {
            // Exited first, read second: once a process is seen gone,
            // everything it wrote has been read.
            proc.exited();
            heard.extend(
                proc.poll()
                    .into_iter()
                    .map(|(s, l)| (proc.name.clone(), s, l)),
            );
        }
        // A retired process is read once more after it has exited, and
        // then let go: everything it wrote is in its files by then.
        let mut still = Vec::new();
        for mut proc in std::mem::take(&mut self.retired) {
            let gone = proc.exited().is_some();
            heard.extend(
                proc.poll()
                    .into_iter()
                    .map(|(s, l)| (proc.name.clone(), s, l)),
            );
            if !gone {
                still.push(proc);
            }
        }
        self.retired = still;
        self.timeline
            .extend(heard.into_iter().map(|(who, stream, line)| Said {
                at,
                who,
                stream,
                line,
            }));
        if let Some(replay) = &mut self.replay {
            // A replay caught mid-write is read again next time.
            let _ = replay.poll();
            let (tick, at) = (self.tick(), self.game_time());
            self.figures.observe(tick, at);
        }
        if at >= self.sampled + MEMORY_EVERY {
            self.sample_server();
        }
    }

    /// Samples the server's peak memory, while it is there to ask.
    pub(crate) fn sample_server(&mut self) {
        self.sampled = self.clock.now();
        let peak = self
            .server
            .as_ref()
            .filter(|s| !s.exited_now())
            .and_then(|s| figures::peak_kib(s.pid()));
        if let Some(kib) = peak {
            self.figures.sample_server(self.server_generation, kib);
        }
    }

    /// Polls until `check` finds what it looks for, at most `limit`.
    pub(crate) fn wait<T>(
        &mut self,
        limit: Duration,
        mut check: impl FnMut(&Run) -> Option<T>,
    ) -> Option<T> {
        let deadline = self.clock.now() + limit;
        loop {
            self.pump();
            if let Some(found) = check(self) {
                return Some(found);
            }
            if self.clock.now() >= deadline || self.stopped() {
                return None;
            }
            std::thread::sleep(POLL);
        }
    }

    /// Waits for a line from `from` on in the timeline that `matches`.
    pub(crate) fn wait_line(
        &mut self,
        from: usize,
        limit: Duration,
        matches: impl Fn(&Said) -> bool,
    ) -> Option<Said> {
        self.wait(limit, |run| {
            run.timeline[from.min(run.timeline.len())..]
                .iter()
                .find(|s| matches(s))
                .cloned()
        })
    }

    /// Real time while pumping, for a fault's own length.
    pub(crate) fn hold(&mut self, length: Duration) {
        let until = self.clock.now() + length;
        while self.clock.now() < until && !self.stopped() {
            self.pump();
            std::thread::sleep(POLL.min(until.saturating_sub(self.clock.now())));
        }
    }

    /// A new entry for fault `number`, done now.
    pub(crate) fn entry(&self, number: usize, fault: Fault) -> Entry {
        Entry {
            number,
            fault,
            at: self.game_time(),
            tick: self.tick(),
            end_tick: self.tick(),
            said: Vec::new(),
            took: Duration::ZERO,
            answer: Ok(String::new()),
        }
    }
}
