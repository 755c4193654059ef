//! A networked game in progress in the page, driven as the native
//! client's `NetPlay` drives it: the [`NetGame`] on the connection's
//! events, the accumulator with no MAX_LOOPS (owed ticks are caught up,
//! within a budget per call), the local input sampled after each tick and
//! sent at once (and while a peer's lateness stalls the game, for the
//! steps the clock says are overdue), hash reports, capacity reports,
//! snapshots the server asks for, desync notices and speed changes.
//!
//! What it has to say to the server goes out as [`NetCommand`]s and what
//! it has to say to the page as lines, both collected in an [`Outbox`] the
//! peer empties after every call. Given the time (`now`, since the
//! connection's epoch), like the rest of the peer.

use std::ops::Range;
use std::time::Duration;

use lockstep_engine::games::{ForGame, Games, Playable};
use lockstep_engine::lockstep::net_game::{Advance, GameOptions, NetGame};
use lockstep_engine::timing::capacity::CapacityMeter;
use lockstep_engine::{final_line, StatsLine};
use lockstep_link::connection::{LinkStats, NetCommand, NetEvent, Started};
use lockstep_link::input_schedule::Schedule;
use lockstep_protocol::{
    encode, DesyncNotice, Input, PeerStatus, PlayerId, Slack, Start, Tick, MAX_SNAPSHOT_SIZE,
};
use web_time::Instant;

use crate::games::WebGame;
use crate::picture;

/// Most real time one call spends running ticks before the page may draw
/// and hear the network (the native client's `TICK_BUDGET`): owed ticks
/// are not dropped, the next call runs them.
const TICK_BUDGET: Duration = Duration::from_millis(50);

/// A call this long after the last means the page stopped (a background
/// tab, a frozen page): the native client's `HICCUP`.
const HICCUP: Duration = Duration::from_millis(150);

/// What one call did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FrameTicks {
    /// Ticks simulated.
    pub steps: u32,
    /// Whether a due tick had to wait for its bundle.
    pub stalled: bool,
    /// The interpolation alpha to draw at.
    pub alpha: f32,
    /// Whether `ticks` was reached: leave now.
    pub finished: bool,
}

/// What a game has to say, collected until the peer takes it.
#[derive(Debug, Default)]
pub struct Outbox {
    /// For the connection, in order.
    pub commands: Vec<NetCommand>,
    /// For the console.
    pub lines: Vec<String>,
}

/// What the player asked for beyond the server's Start.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlayOptions {
    /// Play the game's seeded bot.
    pub bot: Option<u64>,
    /// Leave at this tick.
    pub ticks: Option<u32>,
    /// Fault injection and the rest of the engine's options.
    pub game: GameOptions,
}

/// Figures for the HUD and `window.lockstep.state()`.
#[derive(Debug, Clone, PartialEq)]
pub struct GameView {
    /// The game's name.
    pub game: String,
    /// The world's tick.
    pub tick: u32,
    /// The world's hash.
    pub hash: u64,
    /// Our slot, `None` spectating.
    pub me: Option<PlayerId>,
    /// The input delay in force, ticks.
    pub delay: u32,
    /// Ticks that waited for their bundle.
    pub stalls: u64,
    /// The game speed, percent.
    pub speed: u16,
    /// The input last sent (the bot's or the page's).
    pub last_input: Input,
    /// Every player, its name and score, in slot order; no score in a
    /// game that keeps none.
    pub players: Vec<(PlayerId, String, Option<u32>)>,
    /// What the banner says (a desync, a catch-up, a lost server).
    pub banner: Option<String>,
}

/// A game of `G` in progress.
#[derive(Debug)]
pub struct Play<G: WebGame> {
    game: NetGame<G>,
    bot: Option<G::Bot>,
    /// The input last told to the connection as held; `None` for a bot or
    /// a spectator.
    held: Option<Input>,
    last_input: Input,
    capacity: CapacityMeter,
    link: LinkStats,
    peers: Option<PeerStatus>,
    options: PlayOptions,
    epoch: Instant,
    last_frame: Duration,
    alpha: f32,
    desync: Option<String>,
    reconnecting: bool,
    catching_up: bool,
    started_at: Duration,
    finished: bool,
    outbox: Outbox,
}

impl<G: WebGame> Play<G> {
    /// Starts the game the server announced; `epoch` is the instant the
    /// connection's times count from.
    pub fn start(started: Started, options: PlayOptions, epoch: Instant) -> Result<Self, String> {
        let Started {
            start,
            at,
            snapshot,
        } = started;
        let game = match snapshot {
            Some(bytes) => NetGame::from_world(
                &start,
                options.game,
                NetGame::snapshot_world(&start, &bytes)?,
            ),
            None => NetGame::new(&start, options.game).map_err(|e| e.to_string())?,
        };
        let at = at.saturating_duration_since(epoch);
        let on_schedule = options.bot.is_none() && game.me.is_some();
        let mut play = Play {
            bot: match (options.bot, game.me) {
                (Some(seed), Some(me)) => Some(G::bot(seed, me)),
                _ => None,
            },
            held: on_schedule.then(Input::default),
            last_input: Input::default(),
            capacity: CapacityMeter::new(start.tick_rate),
            link: LinkStats::default(),
            peers: None,
            options,
            epoch,
            last_frame: at,
            alpha: 0.0,
            desync: None,
            reconnecting: false,
            catching_up: game.catching_up().is_some(),
            started_at: at,
            finished: false,
            outbox: Outbox::default(),
            game,
        };
        play.send_initial_inputs();
        if play.held.is_some() {
            play.outbox
                .commands
                .push(NetCommand::Hold(Input::default()));
        }
        Ok(play)
    }

    fn send_initial_inputs(&mut self) {
        for (tick, input) in self.game.initial_inputs() {
            self.outbox.commands.push(NetCommand::Input(tick, input));
        }
    }

    fn say(&mut self, line: String) {
        self.outbox.lines.push(format!("lockstep-web: {line}"));
    }

    /// Applies one event of the connection (a Start is the peer's).
    pub fn handle(&mut self, event: NetEvent, now: Duration) {
        match event {
            NetEvent::Bundles {
                first_tick,
                bundles,
            } => self.game.receive(first_tick, bundles),
            NetEvent::Stats(stats) => self.link = stats,
            NetEvent::Desync(notice) => self.on_desync(&notice),
            NetEvent::Pinpointed { tick, first } => {
                self.say(format!("the desync at tick {tick} began at tick {first}"));
                if let Some(banner) = &mut self.desync {
                    banner.push_str(&format!(" (from tick {first})"));
                }
            }
            NetEvent::Peers(status) => self.peers = Some(status),
            NetEvent::Speed {
                from_tick,
                percent,
                postpone,
            } => self.game.set_speed(from_tick, percent, postpone),
            NetEvent::SnapshotRequest(tick) => self.send_snapshot(tick),
            NetEvent::Reconnecting { reason, for_secs } => {
                self.say(format!("{reason}; reconnecting for up to {for_secs} s"));
                self.reconnecting = true;
            }
            NetEvent::Resumed { start, at } => self.resume(&start, at, now),
            NetEvent::Welcome { .. }
            | NetEvent::Lobby(_)
            | NetEvent::Started(_)
            | NetEvent::Closed(_) => {}
        }
    }

    /// Goes on after a reconnection with the world kept.
    fn resume(&mut self, start: &Start, at: Instant, now: Duration) {
        let tick = self.game.current.tick();
        self.game.resume(start);
        self.send_initial_inputs();
        self.reconnecting = false;
        self.catching_up = self.game.catching_up().is_some();
        self.started_at = at.saturating_duration_since(self.epoch).min(now);
        self.say(format!(
            "reconnected at tick {tick}; the game goes on from tick {}",
            start.history
        ));
    }

    fn on_desync(&mut self, notice: &DesyncNotice) {
        let names = self.game.names(&notice.diverged).join(", ");
        self.say(format!(
            "desync at tick {}: {names} diverged; a page writes no dump",
            notice.tick
        ));
        self.desync = Some(format!("DESYNC at tick {}: {names} diverged", notice.tick));
        if let Some((first_tick, hashes)) = self.game.tick_hashes(notice) {
            let command = NetCommand::TickHashes(notice.tick, first_tick, hashes);
            self.outbox.commands.push(command);
        }
    }

    /// Sends the server our world after `tick`, if the history still
    /// holds it.
    fn send_snapshot(&mut self, tick: Tick) {
        let Some(world) = self.game.world_at(tick) else {
            return;
        };
        match encode(&*world, MAX_SNAPSHOT_SIZE as usize) {
            Ok(bytes) => self.outbox.commands.push(NetCommand::Snapshot(tick, bytes)),
            Err(e) => self.say(format!("cannot send a snapshot of tick {tick}: {e}")),
        }
    }

    /// How early our inputs reach the server, as its last lag report says.
    fn own_slack(&self) -> Option<Slack> {
        let me = self.game.me?;
        let status = self.peers.as_ref()?;
        status.peers.iter().find(|p| p.player == me)?.slack
    }

    /// The round trip the server measures to us, for the link's figures
    /// (a WebSocket does not tell the page its own).
    pub fn server_rtt(&self) -> Option<Duration> {
        let me = self.game.me?;
        let status = self.peers.as_ref()?;
        let peer = status.peers.iter().find(|p| p.player == me)?;
        Some(Duration::from_millis(u64::from(peer.ping_ms)))
    }

    /// The page's player now holds `input`.
    pub fn hold(&mut self, input: Input) {
        if let Some(held) = &mut self.held {
            if *held != input {
                *held = input;
                self.last_input = input;
                self.outbox.commands.push(NetCommand::Hold(input));
            }
        }
    }

    /// Runs the ticks due at `now`: flipcode's inner loop, with `sample`
    /// the page's input when no bot plays.
    pub fn run_ticks(&mut self, now: Duration, sample: Input) -> FrameTicks {
        let elapsed = now.saturating_sub(self.last_frame);
        self.game.begin_frame(elapsed.as_nanos() as u64);
        self.last_frame = now;
        if elapsed >= HICCUP {
            self.game.hiccup();
        }
        let (tick, behind) = (self.game.current.tick(), self.game.behind());
        let busy_from = crate::clock::now();
        let frame = self.tick_loop(now, busy_from, sample);
        let busy_ns = crate::clock::since(busy_from).as_nanos() as u64;
        let measured = self
            .capacity
            .frame(elapsed.as_nanos() as u64, frame.steps, busy_ns);
        if let (Some(capacity), Some(_)) = (measured, self.game.me) {
            let command = NetCommand::Capacity(capacity, tick, behind);
            self.outbox.commands.push(command);
        }
        frame
    }

    fn tick_loop(&mut self, now: Duration, busy_from: Instant, sample: Input) -> FrameTicks {
        let mut frame = FrameTicks::default();
        loop {
            match self.game.advance() {
                Advance::Ran { tick, report, .. } => {
                    frame.steps += 1;
                    if let Some((tick, hash)) = report {
                        self.outbox.commands.push(NetCommand::Report(tick, hash));
                    }
                    let slack = self.own_slack();
                    self.game.adapt_delay(self.link.figures(), slack);
                    let due = self.game.local_ticks_due();
                    self.send_local(due, sample);
                    if self.options.ticks.is_some_and(|t| tick.0 >= t) {
                        frame.finished = true;
                        break;
                    }
                    if crate::clock::since(busy_from) >= TICK_BUDGET {
                        break;
                    }
                }
                Advance::Stalled(_) => {
                    let due = self.game.local_ticks_due_while_stalled();
                    self.send_local(due, sample);
                    frame.stalled = true;
                    break;
                }
                Advance::NotDue => break,
            }
        }
        self.report_catch_up(now);
        self.publish_schedule(now);
        self.alpha = self.game.end_frame().alpha;
        frame.alpha = self.alpha;
        self.finished |= frame.finished;
        frame
    }

    /// Samples one input (the bot's, or the page's) and sends it for
    /// every tick of `due`.
    fn send_local(&mut self, due: Range<Tick>, sample: Input) {
        if due.is_empty() {
            return;
        }
        let input = match &mut self.bot {
            Some(bot) => {
                let me = self.game.me.unwrap_or_default();
                self.game.current.bot_input(bot, me)
            }
            None => sample,
        };
        self.last_input = input;
        for t in due.start.0..due.end.0 {
            self.outbox.commands.push(NetCommand::Input(Tick(t), input));
        }
    }

    /// Tells the connection where the game's clock stood at `now`, once
    /// the game runs live, for the inputs that fall due before the next
    /// call samples them.
    fn publish_schedule(&mut self, now: Duration) {
        if self.held.is_none() {
            return;
        }
        if let Some(schedule) = Schedule::of(&self.game) {
            let at = self.epoch + now;
            self.outbox
                .commands
                .push(NetCommand::Schedule(schedule, at));
        }
    }

    /// Says once when a fast-forward is over.
    fn report_catch_up(&mut self, now: Duration) {
        if self.catching_up && self.game.catching_up().is_none() {
            self.catching_up = false;
            let ms = now.saturating_sub(self.started_at).as_millis();
            let tick = self.game.current.tick();
            self.say(format!("caught up with the game at tick {tick} in {ms} ms"));
        }
    }

    /// Whether `ticks` was reached.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// Whether we still take part (the server did not remove us).
    pub fn is_playing(&self) -> bool {
        self.game.is_playing()
    }

    /// The `stats ...` and `final ...` lines the native headless client
    /// prints when its game ends, in the same words; `frame` is the
    /// page's frame time (`None` for a bot).
    pub fn report(&self, frame: Option<Duration>) -> Vec<String> {
        let stats = self.game.stats();
        let line = StatsLine {
            stalled_ticks: stats.stalled_ticks,
            tx_bytes: self.link.tx_bytes,
            rx_bytes: self.link.rx_bytes,
            rtt_us: u64::try_from(self.link.rtt.as_micros()).unwrap_or(u64::MAX),
            delay: self.game.input_delay(),
            playout: u32::from(self.game.playout()),
            input_lag_ms: u64::try_from(self.game.input_lag(frame).as_millis()).unwrap_or(u64::MAX),
            replaced: stats.replaced_inputs,
            speed_pct: self.game.slowest_speed().0,
            inputs_on_schedule: self.link.inputs_on_schedule,
            caught_up: stats.caught_up_ticks,
        };
        vec![
            line.to_string(),
            final_line(self.game.current.tick().0, self.game.current.hash()),
        ]
    }

    /// The HUD's figures.
    pub fn view(&self) -> GameView {
        let scores = self.game.current.scores();
        let score = |id: PlayerId| {
            let kept = !scores.is_empty();
            kept.then(|| {
                scores
                    .iter()
                    .find(|(player, _)| *player == id)
                    .map_or(0, |(_, s)| *s)
            })
        };
        let banner = if self.reconnecting {
            Some("Server lost, reconnecting".to_string())
        } else if let Some((done, total)) = self.game.catching_up() {
            Some(format!("Catching up: tick {done} of {total}"))
        } else {
            self.desync.clone()
        };
        GameView {
            game: G::NAME.to_string(),
            tick: self.game.current.tick().0,
            hash: self.game.current.hash(),
            me: self.game.me,
            delay: self.game.input_delay(),
            stalls: self.game.stats().stalled_ticks,
            speed: self.game.speed().0,
            last_input: self.last_input,
            players: self
                .game
                .roster
                .iter()
                .map(|(id, name)| (*id, name.clone(), score(*id)))
                .collect(),
            banner,
        }
    }

    /// The picture at the last call's alpha, encoded for the page.
    pub fn scene(&self, out: &mut Vec<f32>) {
        let (previous, current) = (&self.game.previous, &self.game.current);
        picture::scene(previous, current, self.alpha, self.game.me, out);
    }

    /// What the game said since the last call.
    pub fn outbox(&mut self) -> &mut Outbox {
        &mut self.outbox
    }
}

/// A game of whichever type, for the peer.
pub trait Running: std::fmt::Debug {
    /// See [`Play::handle`].
    fn handle(&mut self, event: NetEvent, now: Duration);
    /// See [`Play::run_ticks`].
    fn run_ticks(&mut self, now: Duration, sample: Input) -> FrameTicks;
    /// See [`Play::hold`].
    fn hold(&mut self, input: Input);
    /// See [`Play::server_rtt`].
    fn server_rtt(&self) -> Option<Duration>;
    /// See [`Play::finished`].
    fn finished(&self) -> bool;
    /// See [`Play::is_playing`].
    fn is_playing(&self) -> bool;
    /// See [`Play::report`].
    fn report(&self, frame: Option<Duration>) -> Vec<String>;
    /// See [`Play::view`].
    fn view(&self) -> GameView;
    /// See [`Play::scene`].
    fn scene(&self, out: &mut Vec<f32>);
    /// See [`Play::outbox`].
    fn outbox(&mut self) -> &mut Outbox;
}

impl<G: WebGame> Running for Play<G> {
    fn handle(&mut self, event: NetEvent, now: Duration) {
        Play::handle(self, event, now);
    }
    fn run_ticks(&mut self, now: Duration, sample: Input) -> FrameTicks {
        Play::run_ticks(self, now, sample)
    }
    fn hold(&mut self, input: Input) {
        Play::hold(self, input);
    }
    fn server_rtt(&self) -> Option<Duration> {
        Play::server_rtt(self)
    }
    fn finished(&self) -> bool {
        Play::finished(self)
    }
    fn is_playing(&self) -> bool {
        Play::is_playing(self)
    }
    fn report(&self, frame: Option<Duration>) -> Vec<String> {
        Play::report(self, frame)
    }
    fn view(&self) -> GameView {
        Play::view(self)
    }
    fn scene(&self, out: &mut Vec<f32>) {
        Play::scene(self, out);
    }
    fn outbox(&mut self) -> &mut Outbox {
        Play::outbox(self)
    }
}

/// Starts the game the Start names, if the page has it.
pub fn start(
    started: Started,
    options: PlayOptions,
    epoch: Instant,
) -> Result<Box<dyn Running>, String> {
    /// The start of one game, for whichever game it is.
    struct Starting {
        started: Started,
        options: PlayOptions,
        epoch: Instant,
    }
    impl ForGame for Starting {
        type Output = Result<Box<dyn Running>, String>;
        fn run<G: Playable>(self) -> Self::Output {
            let play = Play::<G>::start(self.started, self.options, self.epoch)?;
            Ok(Box::new(play))
        }
    }
    let name = started.start.spec.name.clone();
    let starting = Starting {
        started,
        options,
        epoch,
    };
    crate::games::OFFERED
        .run(&name, starting)
        .unwrap_or_else(|unknown| Err(format!("{unknown} (in this page)")))
}
