//! One networked game as the frontend drives it: the world, the lockstep
//! gate and the fixed-step clock, glued in the order of seed 001's loop.
//!
//! No SDL2, no sockets, no clock: the frontend (window or headless) passes
//! the elapsed time in, asks [`NetGame::step`] until it says otherwise,
//! hands each sampled local input back, and draws `previous`/`current` at
//! the returned alpha.

use lockstep_protocol::{Bundle, DesyncNotice, Input, PlayerId, Start, Tick};

use crate::desync::{DesyncDump, History, DEFAULT_HISTORY};
use crate::fixed_step::{FixedStep, FrameEnd, Policy};
use crate::input_buffer::{Gate, InputBuffer};
use crate::sim::{World, WorldConfig};

/// The answer to "may a tick run now?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A tick was simulated: sample the local input and pass it to
    /// [`NetGame::schedule_local`], and send the hash report if any.
    Ran {
        /// The world's tick after the step.
        tick: Tick,
        /// `(tick, hash)` to report to the server: every
        /// `hash_interval` ticks.
        report: Option<(Tick, u64)>,
    },
    /// A tick is due but its bundle has not arrived.
    Stalled(Tick),
    /// No tick is due in this frame.
    NotDue,
}

/// Counters for the HUD and the end-of-game report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GameStats {
    /// Distinct ticks that were due but had to wait for their bundle.
    pub stalled_ticks: u64,
    /// Ticks simulated.
    pub ticks: u64,
}

/// Client-side options of a networked game.
#[derive(Debug, Clone, Copy)]
pub struct GameOptions {
    /// Ticks of snapshots kept for desync dumps.
    pub history: usize,
    /// Nudge one value by one ulp once the world reaches this tick (fault
    /// injection for desync tests).
    pub inject_desync_at: Option<Tick>,
}

impl Default for GameOptions {
    fn default() -> Self {
        GameOptions {
            history: DEFAULT_HISTORY,
            inject_desync_at: None,
        }
    }
}

/// A running networked game.
#[derive(Debug)]
pub struct NetGame {
    /// The world before the last simulated tick (interpolation start).
    pub previous: World,
    /// The world after the last simulated tick.
    pub current: World,
    /// The roster from Start, minus players that have left.
    pub roster: Vec<(PlayerId, String)>,
    /// Our own slot.
    pub me: PlayerId,
    buffer: InputBuffer,
    clock: FixedStep,
    stats: GameStats,
    last_stall: Option<Tick>,
    history: History,
    hash_interval: u32,
    inject_desync_at: Option<Tick>,
    name: String,
}

impl NetGame {
    /// A game as described by the server's Start.
    pub fn new(start: &Start, options: GameOptions) -> NetGame {
        let ids: Vec<PlayerId> = start.roster.iter().map(|r| r.id).collect();
        let config = WorldConfig {
            balls: start.balls,
            ..WorldConfig::new(start.seed, start.tick_rate)
        };
        let world = World::new(config, &ids);
        NetGame {
            previous: world.clone(),
            current: world,
            roster: start
                .roster
                .iter()
                .map(|r| (r.id, r.name.clone()))
                .collect(),
            me: start.you,
            buffer: InputBuffer::new(start.input_delay.max(1)),
            clock: FixedStep::new(start.tick_rate, Policy::NETWORKED),
            stats: GameStats::default(),
            last_stall: None,
            history: History::new(options.history),
            hash_interval: u32::from(start.hash_interval.max(1)),
            inject_desync_at: options.inject_desync_at,
            name: start
                .roster
                .iter()
                .find(|r| r.id == start.you)
                .map(|r| r.name.clone())
                .unwrap_or_default(),
        }
    }

    /// The neutral inputs every client sends for the first ticks.
    pub fn initial_inputs(&self) -> Vec<(Tick, Input)> {
        self.buffer.initial_inputs()
    }

    /// Stores bundles received from the server.
    pub fn receive(&mut self, first_tick: Tick, bundles: Vec<Bundle>) {
        self.buffer.receive(first_tick, bundles);
    }

    /// Starts a frame after `elapsed_ns` of real time.
    pub fn begin_frame(&mut self, elapsed_ns: u64) {
        self.clock.begin_frame(elapsed_ns);
    }

    /// Runs the next tick if it is due and its bundle is here.
    pub fn step(&mut self) -> Step {
        if !self.clock.due() {
            return Step::NotDue;
        }
        match self.buffer.poll() {
            Gate::Step(tick, bundle) => {
                self.previous.clone_from(&self.current);
                for &left in &bundle.left {
                    self.current.remove_player(left);
                    self.roster.retain(|(id, _)| *id != left);
                }
                self.current.step(&bundle.inputs);
                let now = self.current.tick();
                if self.inject_desync_at == Some(now) {
                    self.current.nudge_one_ulp();
                }
                let hash = self.current.hash();
                self.history.record(&bundle, &self.current, hash);
                self.clock.stepped();
                self.stats.ticks += 1;
                debug_assert_eq!(now, tick.next());
                let report = now
                    .0
                    .is_multiple_of(self.hash_interval)
                    .then_some((now, hash));
                Step::Ran { tick: now, report }
            }
            Gate::Stall(tick) => {
                if self.last_stall != Some(tick) {
                    self.last_stall = Some(tick);
                    self.stats.stalled_ticks += 1;
                }
                Step::Stalled(tick)
            }
        }
    }

    /// The tick the input sampled after the last [`Step::Ran`] is for.
    pub fn schedule_local(&self) -> Tick {
        self.buffer.schedule_local()
    }

    /// Ends the frame; the alpha is for drawing `previous`→`current`.
    pub fn end_frame(&mut self) -> FrameEnd {
        self.clock.end_frame()
    }

    /// Nanoseconds until the next tick is due (0 if one is due now).
    pub fn until_due_ns(&self) -> u64 {
        self.clock.tick_ns().saturating_sub(self.clock.lag_ns())
    }

    /// Ticks between sampling and simulating an input.
    pub fn input_delay(&self) -> u32 {
        self.buffer.input_delay()
    }

    /// Counters so far.
    pub fn stats(&self) -> GameStats {
        self.stats
    }

    /// The bundle of the last simulated tick.
    pub fn last_bundle(&self) -> Option<&Bundle> {
        self.history.latest().map(|frame| &frame.bundle)
    }

    /// The dump for a desync the server announced, if the tick is still in
    /// the history.
    pub fn desync_dump(&self, notice: &DesyncNotice) -> Option<DesyncDump> {
        self.history.dump(notice.tick, self.me, &self.name)
    }

    /// Readable names of the players a notice says diverged.
    pub fn names(&self, players: &[PlayerId]) -> Vec<String> {
        players
            .iter()
            .map(|id| {
                self.roster
                    .iter()
                    .find(|(p, _)| p == id)
                    .map_or_else(|| format!("player {id}"), |(_, name)| name.clone())
            })
            .collect()
    }

    /// Whether we are still in the game (not removed by the server).
    pub fn is_playing(&self) -> bool {
        self.roster.iter().any(|(id, _)| *id == self.me)
    }
}
