//! A networked game in progress in the page: the driver of the play loop
//! every frontend shares ([`lockstep_link::play`]). The loop holds the
//! rules (the accumulator with no MAX_LOOPS, inputs on schedule, hash and
//! capacity reports, snapshots, desync answers, speed changes, resume);
//! this driver times its ticks against the [`TICK_BUDGET`] with the
//! page's clock, says its notices on the console as the page always did
//! (`lockstep-web: ...`; a page writes no desync dump), and gives the
//! page its figures and its picture.
//!
//! What it has to say to the server goes out as [`NetCommand`]s and what
//! it has to say to the page as lines, both collected in an [`Outbox`] the
//! peer empties after every call. Given the time (`now`, since the
//! connection's epoch), like the rest of the peer.

use std::time::Duration;

use lockstep_engine::games::{ForGame, Playable};
use lockstep_engine::{final_line, StatsLine};
use lockstep_link::connection::{NetCommand, NetEvent, Started};
use lockstep_link::play::{self as play_loop, FrameTicks, LoopOptions, Notice, Step, TICK_BUDGET};
use lockstep_protocol::{Input, PlayerId};
use web_time::Instant;

use crate::picture;

/// What a game has to say, collected until the peer takes it.
#[derive(Debug, Default)]
pub struct Outbox {
    /// For the connection, in order.
    pub commands: Vec<NetCommand>,
    /// For the console.
    pub lines: Vec<String>,
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
pub struct Play<G: Playable> {
    play: play_loop::Play<G>,
    outbox: Outbox,
}

impl<G: Playable> Play<G> {
    /// Starts the game the server announced; `epoch` is the instant the
    /// connection's times count from.
    pub fn start(started: Started, options: LoopOptions, epoch: Instant) -> Result<Self, String> {
        let play = play_loop::Play::start(started, options, epoch).map_err(|e| e.to_string())?;
        let mut play = Play {
            play,
            outbox: Outbox::default(),
        };
        play.collect();
        Ok(play)
    }

    /// Applies one event of the connection (a Start, and the end, are
    /// the peer's).
    pub fn handle(&mut self, event: NetEvent, now: Duration) {
        if matches!(event, NetEvent::Started(_) | NetEvent::Closed(_)) {
            return;
        }
        if let Err(e) = self.play.handle(event, now) {
            self.outbox.lines.push(format!("lockstep-web: {e}"));
        }
        self.collect();
    }

    /// The round trip the server measures to us, for the link's figures
    /// (a WebSocket does not tell the page its own).
    pub fn server_rtt(&self) -> Option<Duration> {
        self.play.server_rtt()
    }

    /// The page's player now holds `input`.
    pub fn hold(&mut self, input: Input) {
        self.play.hold(input);
        self.collect();
    }

    /// Runs the ticks due at `now`, with `sample` the page's input when
    /// no bot plays, within the [`TICK_BUDGET`] of the page's real time:
    /// owed ticks are not dropped, the next call runs them.
    pub fn run_ticks(&mut self, now: Duration, sample: Input) -> FrameTicks {
        self.play.begin_frame(now, sample);
        let busy_from = crate::clock::now();
        while let Step::Ran { .. } = self.play.step() {
            if crate::clock::since(busy_from) >= TICK_BUDGET {
                break;
            }
        }
        let frame = self.play.end_frame(crate::clock::since(busy_from));
        self.collect();
        frame
    }

    /// Takes what the loop said: its commands as they are, its notices as
    /// the console lines the page prints.
    fn collect(&mut self) {
        let said = self.play.outbox();
        self.outbox.commands.extend(said.commands);
        let lines = said.notices.into_iter().filter_map(console_line);
        self.outbox
            .lines
            .extend(lines.map(|line| format!("lockstep-web: {line}")));
    }

    /// Whether `ticks` was reached.
    pub fn finished(&self) -> bool {
        self.play.finished()
    }

    /// Whether we still take part (the server did not remove us).
    pub fn is_playing(&self) -> bool {
        self.play.game().is_playing()
    }

    /// The `stats ...` and `final ...` lines the native headless client
    /// prints when its game ends, in the same words; `frame` is the
    /// page's frame time (`None` for a bot).
    pub fn report(&self, frame: Option<Duration>) -> Vec<String> {
        let (game, link) = (self.play.game(), self.play.link());
        let stats = game.stats();
        let line = StatsLine {
            stalled_ticks: stats.stalled_ticks,
            tx_bytes: link.tx_bytes,
            rx_bytes: link.rx_bytes,
            rtt_us: u64::try_from(link.rtt.as_micros()).unwrap_or(u64::MAX),
            delay: game.input_delay(),
            playout: u32::from(game.playout()),
            input_lag_ms: u64::try_from(game.input_lag(frame).as_millis()).unwrap_or(u64::MAX),
            replaced: stats.replaced_inputs,
            speed_pct: game.slowest_speed().0,
            inputs_on_schedule: link.inputs_on_schedule,
            caught_up: stats.caught_up_ticks,
        };
        vec![
            line.to_string(),
            final_line(game.current.tick().0, game.current.hash()),
        ]
    }

    /// The HUD's figures.
    pub fn view(&self) -> GameView {
        let game = self.play.game();
        let scores = game.current.scores();
        let score = |id: PlayerId| {
            let kept = !scores.is_empty();
            kept.then(|| {
                scores
                    .iter()
                    .find(|(player, _)| *player == id)
                    .map_or(0, |(_, s)| *s)
            })
        };
        let banner = if self.play.is_reconnecting() {
            Some("Server lost, reconnecting".to_string())
        } else if let Some((done, total)) = game.catching_up() {
            Some(format!("Catching up: tick {done} of {total}"))
        } else {
            self.play.desync().map(str::to_string)
        };
        GameView {
            game: G::NAME.to_string(),
            tick: game.current.tick().0,
            hash: game.current.hash(),
            me: game.me,
            delay: game.input_delay(),
            stalls: game.stats().stalled_ticks,
            speed: game.speed().0,
            last_input: self.play.last_input(),
            players: game
                .roster
                .iter()
                .map(|(id, name)| (*id, name.clone(), score(*id)))
                .collect(),
            banner,
        }
    }

    /// The picture at the last call's alpha, encoded for the page.
    pub fn scene(&self, out: &mut Vec<f32>) {
        let game = self.play.game();
        let (previous, current) = (&game.previous, &game.current);
        picture::scene(previous, current, self.play.alpha(), game.me, out);
    }

    /// What the game said since the last call.
    pub fn outbox(&mut self) -> &mut Outbox {
        &mut self.outbox
    }
}

/// What the page's console says of `notice`, in the words it always
/// used: a page writes no desync dump and times a catch-up without saying
/// where it began; what only a terminal or a HUD shows it leaves out.
fn console_line(notice: Notice) -> Option<String> {
    match notice {
        Notice::Desync { tick, names, .. } => Some(
            Notice::Desync {
                tick,
                names,
                dump: "; a page writes no dump".into(),
            }
            .to_string(),
        ),
        Notice::CaughtUp { tick, ms, .. } => {
            Some(format!("caught up with the game at tick {tick} in {ms} ms"))
        }
        Notice::Reconnecting { .. }
        | Notice::Reconnected { .. }
        | Notice::SnapshotNotSent { .. }
        | Notice::SnapshotRefused { .. }
        | Notice::Pinpointed { .. }
        | Notice::TraceDiff { .. } => Some(notice.to_string()),
        Notice::FirstUse(_)
        | Notice::NotRecordingJoined { .. }
        | Notice::Recording(_)
        | Notice::Rejoined
        | Notice::Lag(_)
        | Notice::CatchingUp { .. } => None,
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

impl<G: Playable> Running for Play<G> {
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

/// The start of one game, for whichever game the Start names (see
/// [`crate::games::PageGames::start`]).
pub(crate) struct Starting {
    /// The Start.
    pub started: Started,
    /// How the loop runs.
    pub options: LoopOptions,
    /// The instant the connection's times count from.
    pub epoch: Instant,
}

impl ForGame for Starting {
    type Output = Result<Box<dyn Running>, String>;
    fn run<G: Playable>(self) -> Self::Output {
        let play = Play::<G>::start(self.started, self.options, self.epoch)?;
        Ok(Box::new(play))
    }
}
