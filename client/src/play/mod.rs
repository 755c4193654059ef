//! A networked game in progress, as both frontends drive it: the network
//! client, the [`NetGame`], the local bot if any, and what to do with the
//! server's events (bundles, statistics, the lag indicator, desync notices,
//! speed changes, the end). It also times the ticks it runs, and reports
//! what this machine sustains to the server four times a second
//! ([`CapacityMeter`]).
//!
//! A player's input is sampled after each tick and sent at once, and while
//! a peer's lateness stalls the game, for the steps the clock says are
//! overdue. For a player whose input the frontend holds (the keyboard, or
//! nothing), the network thread is also told that input at every event
//! pump and the game's schedule after every frame's ticks, so it can send
//! the inputs that fall due while the frame draws
//! ([`crate::link::input_schedule`]). A bot's input depends on the world it has
//! simulated: only the frame can give it.

pub mod connect;
mod desync;
pub mod headless;
pub mod notice;
mod options;
mod outcome;
pub mod replaced;

use std::ops::Range;
use std::time::{Duration, Instant};

use lockstep_engine::lockstep::net_game::{Advance, NetGame};
use lockstep_engine::replay::recorder::{networked_header, SPECTATOR_REPORTS};
use lockstep_engine::timing::accumulator::FrameEnd;
use lockstep_engine::timing::capacity::CapacityMeter;
use lockstep_protocol::{
    encode, Input, PeerStatus, PlayerId, Slack, Start, Tick, MAX_SNAPSHOT_SIZE,
};

use crate::games::ClientGame;
use crate::io::link::{LinkStats, NetClient, NetCommand, NetEvent, Started};
use crate::io::recording::FileRecorder;
use crate::link::input_schedule::Schedule;
use crate::play::notice::Notice;
use crate::play::replaced::Replacements;
pub use options::PlayOptions;
pub use outcome::{GameOutcome, PlayError};

/// How long the game must wait before the lag line names whom it waits for
/// (shorter waits are ordinary jitter).
const WAIT_SHOWN_AFTER: Duration = Duration::from_millis(500);

/// Most real time one frame spends running ticks before it lets the
/// frontend draw and hear the network. A machine too slow for the tick
/// rate owes ticks all the time; without a bound it would run them for
/// up to a second at once, and learn of a speed change that late.
const TICK_BUDGET: Duration = Duration::from_millis(50);

/// A frame this long after the last means this machine stopped (a
/// process stopped, swapped out, a frozen window): far longer than any
/// frame a running client draws.
const HICCUP: Duration = Duration::from_millis(150);

/// What one frame of ticks did.
#[derive(Debug, Clone, Copy)]
pub struct FrameTicks {
    /// Ticks simulated.
    pub steps: u32,
    /// Whether a due tick had to wait for its bundle.
    pub stalled: bool,
    /// The fixed-step loop's verdict (alpha for drawing).
    pub end: FrameEnd,
    /// Whether `ticks` was reached: leave now.
    pub finished: bool,
}

/// A networked game of `G` in progress.
#[derive(Debug)]
pub struct NetPlay<G: ClientGame> {
    /// The connection.
    pub net: NetClient,
    /// Simulation, gate and clock.
    pub game: NetGame<G>,
    /// Last link statistics.
    pub link: LinkStats,
    /// The last desync announcement, for the HUD.
    pub desync: Option<String>,
    /// The server's last lag indicator.
    pub peers: Option<PeerStatus>,
    bot: Option<G::Bot>,
    /// The input last told to the network thread as held; `None` when it
    /// sends nothing on schedule (a bot, a spectator, or switched off).
    held: Option<Input>,
    recorder: Option<FileRecorder>,
    /// What this machine sustains, reported to the server.
    capacity: CapacityMeter,
    options: PlayOptions,
    last_frame: Instant,
    /// When the current wait for a bundle began.
    waiting_since: Option<Instant>,
    /// The tick the game waits to run (for the debug log).
    stalled_on: Option<Tick>,
    /// Whether the current wait was already reported on stderr.
    wait_reported: bool,
    /// What we said about the inputs the server stood in for.
    replacements: Replacements,
    /// When Start arrived, to time a catch-up.
    started_at: Instant,
    /// The tick of the verified snapshot the game was joined from, if it
    /// was (the catch-up line says so).
    joined_from: Option<Tick>,
    /// Set while the server is lost and the network thread reconnects:
    /// the banner says so.
    reconnecting: Option<String>,
    /// The tick the world stood at when the game went on after a
    /// reconnection (the catch-up line says so).
    resumed_at: Option<Tick>,
}

impl<G: ClientGame> NetPlay<G> {
    /// Starts the game the server announced; `at` is when Start arrived,
    /// the zero of this client's game clock; `snapshot` is the encoded
    /// state it is joined from, if it is.
    pub fn start(
        net: NetClient,
        started: Started,
        options: PlayOptions,
    ) -> Result<NetPlay<G>, PlayError> {
        let Started {
            ref start,
            at,
            snapshot,
        } = started;
        check_fault_phase::<G>(&options)?;
        let snapshot = snapshot
            .map(|bytes| NetGame::<G>::snapshot_world(start, &bytes).map_err(PlayError::Lost))
            .transpose()?;
        let joined_from = snapshot.as_ref().map(|world| world.tick());
        let game = match snapshot {
            Some(world) => NetGame::from_world(start, options.game, world),
            None => NetGame::new(start, options.game)?,
        };
        for (tick, input) in game.initial_inputs() {
            net.send(NetCommand::Input(tick, input));
        }
        // A replay holds every bundle from tick 0; a game joined from a
        // snapshot never had the ones before it.
        let record = match (&options.record, joined_from) {
            (Some(path), Some(tick)) => {
                options.notices.say(Notice::NotRecordingJoined {
                    path: path.clone(),
                    tick,
                });
                None
            }
            (record, _) => record.as_ref(),
        };
        let recorder = record.and_then(|path| {
            let recorder = format!("client {}", game.name());
            let header = networked_header(
                start,
                &recorder,
                crate::io::clock::unix_seconds(),
                crate::io::platform::current(),
            );
            let reporter = game.me.unwrap_or(SPECTATOR_REPORTS);
            FileRecorder::create(path, &header, reporter)
                .map_err(|e| {
                    options
                        .notices
                        .say(Notice::Recording(format!("not recording: {e}")))
                })
                .ok()
        });
        let on_schedule =
            !options.hooks.inputs_on_frames && options.bot.is_none() && game.me.is_some();
        // Nothing is held until the frontend says otherwise.
        let held = on_schedule.then(Input::default);
        if let Some(input) = held {
            net.send(NetCommand::Hold(input));
        }
        Ok(NetPlay {
            bot: match (options.bot, game.me) {
                (Some(seed), Some(me)) => Some(G::bot(seed, me)),
                _ => None,
            },
            held,
            recorder,
            capacity: CapacityMeter::new(start.tick_rate),
            net,
            game,
            link: LinkStats::default(),
            desync: None,
            peers: None,
            options,
            last_frame: at,
            waiting_since: None,
            stalled_on: None,
            wait_reported: false,
            replacements: Replacements::default(),
            started_at: at,
            joined_from,
            reconnecting: None,
            resumed_at: None,
        })
    }

    /// Applies one network event; the end of the connection is an error.
    pub fn handle(&mut self, event: NetEvent) -> Result<(), PlayError> {
        match event {
            NetEvent::Bundles {
                first_tick,
                bundles,
            } => self.game.receive(first_tick, bundles),
            NetEvent::Stats(stats) => self.link = stats,
            NetEvent::Desync(notice) => self.on_desync(&notice),
            NetEvent::Pinpointed { tick, first } => self.on_pinpointed(tick, first),
            NetEvent::Peers(status) => self.peers = Some(status),
            NetEvent::Speed {
                from_tick,
                percent,
                postpone,
            } => self.game.set_speed(from_tick, percent, postpone),
            NetEvent::Closed(closed) => return Err(PlayError::from(closed)),
            NetEvent::SnapshotRequest(tick) => self.send_snapshot(tick),
            NetEvent::Reconnecting { reason, for_secs } => {
                self.options
                    .notices
                    .say(Notice::Reconnecting { reason, for_secs });
                self.reconnecting = Some("Server lost, reconnecting".into());
            }
            NetEvent::Resumed { start, at } => self.resume(&start, at),
            NetEvent::Started(started) => self.rejoin(started)?,
            NetEvent::Welcome { .. } | NetEvent::Lobby(_) => {}
        }
        Ok(())
    }

    /// Goes on after a reconnection with the world we kept: only the
    /// bundles we lacked follow, and our inputs start again where the
    /// server says.
    fn resume(&mut self, start: &Start, at: Instant) {
        let tick = self.game.current.tick();
        self.game.resume(start);
        for (tick, input) in self.game.initial_inputs() {
            self.net.send(NetCommand::Input(tick, input));
        }
        self.reconnecting = None;
        self.resumed_at = Some(tick);
        self.started_at = at;
        self.options.notices.say(Notice::Reconnected {
            at: tick,
            goes_on_from: start.history,
        });
    }

    /// A reconnection the server could not continue from our world (it
    /// no longer holds the bundles we lack, or runs another game): the
    /// game starts again from the server's snapshot or tick 0, as a join
    /// would. A recording cannot follow, and stops here.
    fn rejoin(&mut self, started: Started) -> Result<(), PlayError> {
        let Started {
            ref start,
            at,
            snapshot,
        } = started;
        let snapshot = snapshot
            .map(|bytes| NetGame::<G>::snapshot_world(start, &bytes).map_err(PlayError::Lost))
            .transpose()?;
        self.joined_from = snapshot.as_ref().map(|world| world.tick());
        self.game = match snapshot {
            Some(world) => NetGame::from_world(start, self.options.game, world),
            None => NetGame::new(start, self.options.game)?,
        };
        for (tick, input) in self.game.initial_inputs() {
            self.net.send(NetCommand::Input(tick, input));
        }
        if let Some(recorder) = self.recorder.take() {
            self.options.notices.say(Notice::Recording(
                "joined the game afresh after reconnecting; recording stops here".into(),
            ));
            self.finish_recording(recorder, "the game was joined afresh after a reconnection");
        }
        self.reconnecting = None;
        self.resumed_at = None;
        self.started_at = at;
        self.options.notices.say(Notice::Rejoined);
        Ok(())
    }

    /// Whether the server is lost and the network thread reconnects.
    pub fn is_reconnecting(&self) -> bool {
        self.reconnecting.is_some()
    }

    /// What the window's banner says about the connection: that the
    /// server is lost and the game waits for it, or how far a catch-up
    /// has come.
    pub fn connection_banner(&self) -> Option<String> {
        if let Some(reconnecting) = &self.reconnecting {
            return Some(reconnecting.clone());
        }
        let (done, total) = self.game.catching_up()?;
        Some(match self.resumed_at {
            Some(_) if done + 1 >= total => "Reconnected, waiting for the other players".into(),
            Some(_) => format!("Reconnected, catching up: tick {done} of {total}"),
            None => format!("Catching up: tick {done} of {total}"),
        })
    }

    /// Sends the server our world after `tick` ticks, if the history ring
    /// still holds it (else the server's wait runs out and it asks
    /// someone else). `--corrupt-snapshot` sends it one ulp off, to prove
    /// the server does not trust it.
    fn send_snapshot(&mut self, tick: Tick) {
        let Some(world) = self.game.world_at(tick) else {
            tracing::debug!(%tick, "snapshot asked for a tick no longer held");
            return;
        };
        let mut world = world.into_owned();
        if self.options.hooks.corrupt_snapshot {
            world.nudge();
        }
        match encode(&world, MAX_SNAPSHOT_SIZE as usize) {
            Ok(bytes) => self.net.send(NetCommand::Snapshot(tick, bytes)),
            Err(e) => self.options.notices.say(Notice::SnapshotNotSent {
                tick,
                why: e.to_string(),
            }),
        }
    }

    /// Applies every event that has arrived.
    pub fn drain(&mut self) -> Result<(), PlayError> {
        while let Ok(event) = self.net.events().try_recv() {
            self.handle(event)?;
        }
        Ok(())
    }

    /// How early our inputs reach the server, as its last lag report
    /// says.
    fn own_slack(&self) -> Option<Slack> {
        let me = self.game.me?;
        let status = self.peers.as_ref()?;
        status.peers.iter().find(|p| p.player == me)?.slack
    }

    /// Runs the ticks due at `now`: flipcode's inner loop. `sample` gives
    /// the frontend's input when no bot plays. The time the ticks take
    /// goes to the capacity meter; a player reports its verdict.
    pub fn run_ticks(&mut self, now: Instant, sample: impl FnMut() -> Input) -> FrameTicks {
        let elapsed = now.saturating_duration_since(self.last_frame);
        self.game.begin_frame(elapsed.as_nanos() as u64);
        self.last_frame = now;
        if elapsed >= HICCUP {
            self.game.hiccup();
        }
        // How late this frame starts, for the report.
        let (tick, behind) = (self.game.current.tick(), self.game.behind());
        let busy_from = crate::io::clock::now();
        let frame = self.tick_loop(now, busy_from, sample);
        let busy_ns = crate::io::clock::since(busy_from).as_nanos() as u64;
        if let Some(capacity) = self
            .capacity
            .frame(elapsed.as_nanos() as u64, frame.steps, busy_ns)
        {
            if self.game.me.is_some() {
                self.net.send(NetCommand::Capacity(capacity, tick, behind));
            }
        }
        frame
    }

    /// The ticks of one frame, begun at `busy_from`, for
    /// [`NetPlay::run_ticks`].
    fn tick_loop(
        &mut self,
        now: Instant,
        busy_from: Instant,
        mut sample: impl FnMut() -> Input,
    ) -> FrameTicks {
        let mut steps = 0;
        let mut stalled = false;
        let mut finished = false;
        let catching_up = self.game.catching_up().is_some();
        loop {
            let playout = self.game.playout();
            match self.game.advance() {
                Advance::Ran {
                    tick,
                    report,
                    replaced,
                } => {
                    steps += 1;
                    if self.game.playout() != playout {
                        tracing::debug!(
                            %tick,
                            from = playout,
                            to = self.game.playout(),
                            delay = self.game.input_delay(),
                            "playout delay changed"
                        );
                    }
                    if let Some(line) = replaced.and_then(|t| self.replacements.replaced(t, now)) {
                        self.options.notices.say(Notice::Lag(line));
                    }
                    if let Some(cost) = self.options.hooks.tick_cost.filter(|c| c.applies(tick)) {
                        std::thread::sleep(cost.per_tick);
                    }
                    if let (Some(recorder), Some(bundle)) =
                        (&mut self.recorder, self.game.last_bundle())
                    {
                        if let Err(stopped) = recorder.tick(bundle, &self.game.current) {
                            self.options.notices.say(Notice::Recording(stopped));
                        }
                    }
                    if let Some((tick, hash)) = report {
                        self.net.send(NetCommand::Report(tick, hash));
                    }
                    let before = self.game.input_delay();
                    let slack = self.own_slack();
                    self.game.adapt_delay(self.link.figures(), slack);
                    if self.game.input_delay() != before {
                        tracing::debug!(
                            %tick,
                            from = before,
                            to = self.game.input_delay(),
                            ?slack,
                            rtt_us = self.link.rtt.as_micros() as u64,
                            "input delay changed"
                        );
                    }
                    let due = self.game.local_ticks_due();
                    self.send_local(due, &mut sample);
                    if self.options.ticks.is_some_and(|t| tick.0 >= t) {
                        finished = true;
                        break;
                    }
                    if crate::io::clock::since(busy_from) >= TICK_BUDGET {
                        break;
                    }
                }
                Advance::Stalled(tick) => {
                    self.stalled_on = Some(tick);
                    // Our inputs follow the clock even while a peer's
                    // lateness holds the simulation.
                    let due = self.game.local_ticks_due_while_stalled();
                    self.send_local(due, &mut sample);
                    stalled = true;
                    break;
                }
                Advance::NotDue => break,
            }
        }
        if catching_up {
            self.report_catch_up();
        }
        self.publish_schedule(now);
        if let Some(line) = self.replacements.due(now) {
            self.options.notices.say(Notice::Lag(line));
        }
        self.track_wait(stalled && !catching_up, now);
        FrameTicks {
            steps,
            stalled,
            end: self.game.end_frame(),
            finished,
        }
    }

    /// Samples one input (the bot's, or the frontend's) and sends it for
    /// every tick of `due`.
    fn send_local(&mut self, due: Range<Tick>, sample: &mut impl FnMut() -> Input) {
        if due.is_empty() {
            return;
        }
        let input = match &mut self.bot {
            Some(bot) => {
                let me = self.game.me.unwrap_or_default();
                self.game.current.bot_input(bot, me)
            }
            None => sample(),
        };
        for t in due.start.0..due.end.0 {
            self.net.send(NetCommand::Input(Tick(t), input));
        }
    }

    /// The player now holds `input` (the frontend calls this at every
    /// event pump): the network thread gives it to ticks that fall due
    /// before the next frame samples them.
    pub fn hold(&mut self, input: Input) {
        if let Some(held) = &mut self.held {
            if *held != input {
                *held = input;
                self.net.send(NetCommand::Hold(input));
            }
        }
    }

    /// Tells the network thread where the game's clock stood at `now`,
    /// the start of this frame, once it runs live (not while catching up
    /// through history).
    fn publish_schedule(&self, now: Instant) {
        if self.held.is_none() {
            return;
        }
        if let Some(schedule) = Schedule::of(&self.game) {
            self.net.send(NetCommand::Schedule(schedule, now));
        }
    }

    /// The lag indicator, in words: whom the game has been waiting for, if
    /// it has waited long enough to be worth saying.
    pub fn waiting_for(&self) -> Option<String> {
        if self.reconnecting.is_some() {
            // The last lag report is from the server that is gone.
            return Some("waiting for the server to come back".into());
        }
        let since = self.waiting_since?;
        if crate::io::clock::since(since) < WAIT_SHOWN_AFTER {
            return None;
        }
        let status = self.peers.as_ref()?;
        Some(waiting_line(status, self.game.me, |p| {
            self.game.names(&[p]).join("")
        }))
    }

    /// The HUD's note that the server stood in for our inputs lately.
    pub fn replaced_note(&self, now: Instant) -> Option<String> {
        self.replacements
            .note(now, self.game.stats().replaced_inputs)
    }

    /// The progress of a fast-forward, and how long it took once done.
    fn report_catch_up(&self) {
        match self.game.catching_up() {
            Some((done, total)) => {
                self.options.notices.say(Notice::CatchingUp { done, total });
            }
            None => {
                let from = match (self.resumed_at, self.joined_from) {
                    (Some(tick), _) => format!(
                        " after reconnecting at tick {tick} ({} ticks simulated)",
                        self.game.current.tick().since(tick)
                    ),
                    (None, Some(tick)) => format!(
                        " from the snapshot of tick {tick} ({} ticks re-simulated)",
                        self.game.current.tick().since(tick)
                    ),
                    (None, None) => " from tick 0".to_string(),
                };
                self.options.notices.say(Notice::CaughtUp {
                    tick: self.game.current.tick(),
                    ms: crate::io::clock::since(self.started_at).as_millis(),
                    from,
                });
            }
        }
    }

    fn track_wait(&mut self, stalled: bool, now: Instant) {
        if !stalled {
            if let Some(since) = self.waiting_since.take() {
                tracing::debug!(
                    tick = %self.stalled_on.unwrap_or_default(),
                    waited_us = now.saturating_duration_since(since).as_micros() as u64,
                    "stall ended"
                );
            }
            self.wait_reported = false;
            return;
        }
        self.waiting_since.get_or_insert(now);
        if !self.wait_reported {
            if let Some(line) = self.waiting_for() {
                self.options.notices.say(Notice::Lag(line));
                self.wait_reported = true;
            }
        }
    }

    /// Leaves the game and reports how it ended; `frame` is the
    /// frontend's frame time (`None` headless), for the input lag.
    pub fn finish(mut self, frame: Option<Duration>) -> GameOutcome {
        if let Some(line) = self.replacements.flush() {
            self.options.notices.say(Notice::Lag(line));
        }
        self.net.leave();
        if let Some(recorder) = self.recorder.take() {
            self.finish_recording(recorder, "the player left");
        }
        GameOutcome::new(&self.game, self.link, frame)
    }

    /// Tells the server this player is done with the game but stays for
    /// the next one; hands back the connection, how the game ended and
    /// its last world (for the lobby's scores).
    pub fn finish_game(mut self, frame: Option<Duration>) -> (NetClient, GameOutcome, G) {
        if let Some(line) = self.replacements.flush() {
            self.options.notices.say(Notice::Lag(line));
        }
        self.net.send(NetCommand::GameDone);
        if let Some(recorder) = self.recorder.take() {
            self.finish_recording(recorder, "the player finished the game");
        }
        let outcome = GameOutcome::new(&self.game, self.link, frame);
        (self.net, outcome, self.game.current)
    }

    /// Writes the recording's End record, saying so if it cannot.
    fn finish_recording(&self, recorder: FileRecorder, reason: &str) {
        if let Err(problem) = recorder.finish(reason) {
            self.options.notices.say(Notice::Recording(problem));
        }
    }
}

/// Refuses a fault injected in a phase `G` does not have
/// (`--inject-desync-phase` names the phases of every game the client
/// offers).
fn check_fault_phase<G: ClientGame>(options: &PlayOptions) -> Result<(), PlayError> {
    match options.game.fault.and_then(|fault| fault.phase) {
        Some(phase) if phase != "roster" && !G::PHASES.contains(&phase) => {
            Err(PlayError::Lost(format!(
                "--inject-desync-phase {phase}: the game {} has no such phase; its phases are \
                 roster, {}",
                G::NAME,
                G::PHASES.join(", ")
            )))
        }
        _ => Ok(()),
    }
}

/// What the game waits for, from the server's last word on the players
/// (`status`): the players it waits for, each with its link, named by
/// `name`; this machine itself (`me`) as our own inputs, late at the
/// server; the server when it names nobody.
fn waiting_line(
    status: &PeerStatus,
    me: Option<PlayerId>,
    name: impl Fn(PlayerId) -> String,
) -> String {
    let waited: Vec<String> = status
        .peers
        .iter()
        .filter(|p| p.waited_for)
        .map(|p| {
            let who = if Some(p.player) == me {
                "our own inputs".to_string()
            } else {
                name(p.player)
            };
            format!(
                "{who} (ping {} ms, {} ticks behind, heard {} ms ago)",
                p.ping_ms, p.ticks_behind, p.silent_ms
            )
        })
        .collect();
    if waited.is_empty() {
        "waiting for the server".into()
    } else {
        format!("waiting for {}", waited.join(", "))
    }
}

#[cfg(test)]
mod tests;
