//! One networked game as the frontend drives it: the world, the lockstep
//! gate and the fixed-step clock, glued in the order of flipcode's loop.
//!
//! No SDL2, no sockets, no clock: the frontend (window or headless) passes
//! the elapsed time in, asks [`NetGame::advance`] until it says otherwise,
//! hands each sampled local input back, and draws `previous`/`current` at
//! the returned alpha. The server's speed announcements
//! ([`NetGame::set_speed`]) set the clock's tick length for the ticks
//! from theirs on.
//!
//! A game joined late, or resumed after a reconnection, first catches up:
//! the ticks it missed run as soon as their bundles arrive, and only then
//! does the clock pace the game ([`NetGame::catching_up`]).

use std::time::Duration;

use lockstep_protocol::{
    decode, Bundle, GameSpec, Input, Percent, PlayerId, Slack, Start, Tick, MAX_SNAPSHOT_SIZE,
    MAX_TICK_HASHES,
};

use crate::determinism::history::{History, DEFAULT_HISTORY};
use crate::game::{apply, Game, HasBots, Setup, SetupError};
use crate::lockstep::gate::{Gate, InputBuffer};
use crate::lockstep::input_delay::{DelayController, LinkFigures};
use crate::lockstep::playout::Playout;
use crate::timing::accumulator::{FixedStep, FrameEnd, Policy};
use crate::timing::speed::SpeedSchedule;

/// The answer to "may a tick run now?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advance {
    /// A tick was simulated: sample the local input for the ticks
    /// [`NetGame::local_ticks_due`] names, and send the hash report if any.
    Ran {
        /// The world's tick after the step.
        tick: Tick,
        /// `(tick, hash)` to report to the server: every
        /// `hash_interval` ticks, by a player, once caught up.
        report: Option<(Tick, u64)>,
        /// The bundle's tick (`tick - 1`) when our input in it is the
        /// server's stand-in ([`Bundle::substituted`]): ours reached the
        /// server too late. Not while catching up.
        replaced: Option<Tick>,
    },
    /// A tick is due but its bundle has not arrived.
    Stalled(Tick),
    /// No tick is due in this frame.
    NotDue,
}

/// Most overdue steps whose inputs a stalled client sends ahead: two
/// seconds at 60 Hz, the server's drop timeout, and half the window of
/// ticks the server accepts inputs for.
pub const MAX_OVERDUE_INPUTS: u32 = 128;

/// Counters for the HUD and the end-of-game report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GameStats {
    /// Distinct ticks that were due but had to wait for their bundle.
    pub stalled_ticks: u64,
    /// Ticks simulated.
    pub ticks: u64,
    /// Ticks simulated with the server's stand-in for our input (see
    /// [`Advance::Ran`]).
    pub replaced_inputs: u64,
    /// Ticks the clock took as due at once because the others were that
    /// far ahead of it ([`NetGame::advance`]).
    pub caught_up_ticks: u64,
}

/// Client-side options of a networked game.
#[derive(Debug, Clone, Copy)]
pub struct GameOptions {
    /// Ticks of snapshots kept for desync dumps.
    pub history: usize,
    /// One-ulp changes that make this client diverge (fault injection for
    /// desync tests).
    pub fault: Option<Fault>,
    /// The input delay in ticks, fixed instead of adapting it
    /// (`--input-delay`), within [`MIN_DELAY`] and [`MAX_DELAY`]. A pinned
    /// delay keeps the playout at zero too.
    ///
    /// [`MIN_DELAY`]: crate::lockstep::input_delay::MIN_DELAY
    /// [`MAX_DELAY`]: crate::lockstep::input_delay::MAX_DELAY
    pub pinned_delay: Option<u8>,
}

impl Default for GameOptions {
    fn default() -> Self {
        GameOptions {
            history: DEFAULT_HISTORY,
            fault: None,
            pinned_delay: None,
        }
    }
}

/// Where a game is: fast-forwarding through ticks that were played
/// without it, or playing live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Every received bundle runs at once, until the world reaches this
    /// tick and no bundle is left: the history of a game joined late, or
    /// the bundles a reconnected client lacked. The clock waits, and no
    /// hash is reported, no stall counted and no playout adapted.
    CatchingUp(Tick),
    /// A tick runs when the clock says it is due and its bundle is here.
    Live,
}

/// A running networked game.
#[derive(Debug)]
pub struct NetGame<G> {
    /// The state before the last simulated tick (interpolation start).
    pub previous: G,
    /// The state after the last simulated tick.
    pub current: G,
    /// Every player of the game and its name, in slot order.
    pub roster: Vec<(PlayerId, String)>,
    /// Our own slot; `None` when spectating.
    pub me: Option<PlayerId>,
    buffer: InputBuffer,
    clock: FixedStep,
    /// The game speed of each tick, which sets the clock's tick length.
    speed: SpeedSchedule,
    delay: DelayController,
    /// Ticks this client steps behind the schedule to hold more bundles;
    /// the input delay in force is the controller's plus these.
    playout: Playout,
    stats: GameStats,
    last_stall: Option<Tick>,
    /// The clock's lag right after the last tick ran: a tick that stalls
    /// while the clock is still behind was due from then, not from its
    /// place in the schedule, and only the wait since counts as its own.
    lag_after_step: u64,
    history: History<G>,
    hash_interval: u32,
    fault: Option<Fault>,
    name: String,
    /// The game and its settings, as the Start gave them: desync dumps
    /// name them.
    spec: GameSpec,
    first_input_tick: Tick,
    /// Whether the game fast-forwards through history or plays live.
    phase: Phase,
}

impl<G: Game> NetGame<G> {
    /// A game as described by the server's Start, if it is a game of `G`
    /// with settings `G` reads, played with this client's `options`.
    pub fn new(start: &Start, options: GameOptions) -> Result<NetGame<G>, SetupError>
    where
        G: HasBots,
    {
        let setup = Setup::from_start::<G>(start)?;
        Ok(NetGame::from_world(start, options, G::start(&setup)))
    }

    /// The state a game joined from the server's snapshot starts from, for
    /// [`NetGame::from_world`]: bytes that are not a state of `G` at the
    /// Start's snapshot tick hashing to the majority's [`Start::snapshot_hash`]
    /// are refused, saying why. This check on the joiner's machine is what
    /// keeps out a tampered snapshot that a server without the game passed on.
    pub fn snapshot_world(start: &Start, bytes: &[u8]) -> Result<G, String> {
        let tick = start.snapshot.unwrap_or_default();
        let refuse = |why: String| {
            format!(
                "the snapshot of tick {tick} is not the majority's {} world: {why}",
                G::NAME
            )
        };
        let state: G =
            decode(bytes, MAX_SNAPSHOT_SIZE as usize).map_err(|e| refuse(e.to_string()))?;
        if state.tick() != tick {
            return Err(refuse(format!("it is a state of tick {}", state.tick())));
        }
        let Some(confirmed) = start.snapshot_hash else {
            return Err(refuse("the server gave no hash to check it against".into()));
        };
        let got = state.hash();
        if got != confirmed {
            return Err(refuse(format!(
                "it hashes to {got:016x}, the majority reported {confirmed:016x}"
            )));
        }
        Ok(state)
    }

    /// A game joined from a snapshot: `world` is the state after
    /// `world.tick()` ticks (the server's verified snapshot), and the
    /// bundles from that tick on follow. Fast-forwarding then costs the
    /// ticks since the snapshot, not since the game began. `options` as
    /// for [`NetGame::new`].
    pub fn from_world(start: &Start, options: GameOptions, world: G) -> NetGame<G> {
        let delay = DelayController::new(
            start.input_delay,
            start.tick_rate,
            options.pinned_delay,
            start.first_input_tick,
        );
        // The starting state is kept too: the first tick's step can be
        // redone phase by phase, and tick 0's hash compared.
        // An injected fault changes states outside the step, which stepping
        // on from a keyframe would not: then every state is kept.
        let every = match options.fault {
            Some(_) => 1,
            None => G::STATE_EVERY,
        };
        let mut history = History::with_keyframes(options.history, every);
        history.record(&Bundle::default(), &world, world.hash());
        let first_tick = world.tick();
        NetGame {
            previous: world.clone(),
            current: world,
            roster: start
                .roster
                .iter()
                .map(|r| (r.id, r.name.clone()))
                .collect(),
            me: start.you,
            buffer: InputBuffer::new(delay.current(), start.first_input_tick)
                .starting_at(first_tick),
            clock: FixedStep::new(start.tick_rate, Policy::NETWORKED),
            speed: SpeedSchedule::new(start.tick_rate),
            delay,
            playout: Playout::new(start.tick_rate),
            stats: GameStats::default(),
            last_stall: None,
            lag_after_step: 0,
            history,
            hash_interval: u32::from(start.hash_interval.max(1)),
            fault: options.fault,
            name: start
                .roster
                .iter()
                .find(|r| Some(r.id) == start.you)
                .map_or_else(|| "spectator".to_string(), |r| r.name.clone()),
            first_input_tick: start.first_input_tick,
            phase: match start.history {
                0 => Phase::Live,
                history => Phase::CatchingUp(Tick(history)),
            },
            spec: start.spec.clone(),
        }
    }

    /// The game goes on after a reconnection (to the same server, or to
    /// one restarted with `--resume`) that kept this world: the Start says
    /// which tick our inputs start at, and the bundles up to
    /// `start.history` follow from [`Start::resume`], the first one we
    /// lacked. The world, its history and the counters stay; the clock
    /// starts again when the bundle of the resumed game's first tick
    /// arrives, as at a game's start, so the time the server was away is
    /// not caught up: nobody played it.
    pub fn resume(&mut self, start: &Start) {
        self.buffer.reconnected(
            self.delay.current() + self.playout.ticks(),
            start.first_input_tick,
        );
        self.first_input_tick = start.first_input_tick;
        self.me = start.you;
        self.roster = start
            .roster
            .iter()
            .map(|r| (r.id, r.name.clone()))
            .collect();
        self.speed = SpeedSchedule::new(start.tick_rate);
        self.last_stall = None;
        self.lag_after_step = 0;
        self.phase = Phase::CatchingUp(Tick(start.history).next());
    }

    /// The neutral inputs this client sends for its first ticks (none for
    /// a spectator).
    pub fn initial_inputs(&self) -> Vec<(Tick, Input)> {
        match self.me {
            Some(_) => self.buffer.initial_inputs(),
            None => Vec::new(),
        }
    }

    /// The state after `tick` ticks, while the history ring still holds it
    /// (the server asks for it as a snapshot).
    pub fn world_at(&self, tick: Tick) -> Option<std::borrow::Cow<'_, G>> {
        self.history.at(tick)
    }

    /// Stores bundles received from the server.
    pub fn receive(&mut self, first_tick: Tick, bundles: Vec<Bundle>) {
        self.buffer.receive(first_tick, bundles);
    }

    /// Starts a frame after `elapsed_ns` of real time.
    pub fn begin_frame(&mut self, elapsed_ns: u64) {
        self.clock.begin_frame(elapsed_ns);
    }

    /// `(done, total)` while catching up (through the history of a game
    /// joined late, or the bundles a reconnection lacked): the world's
    /// tick, and the tick it catches up to.
    pub fn catching_up(&self) -> Option<(u32, u32)> {
        match self.phase {
            Phase::CatchingUp(to) => Some((self.current.tick().0, to.0)),
            Phase::Live => None,
        }
    }

    /// The server's announcement that ticks from `from_tick` on run at
    /// `percent` of the nominal speed, `postpone` later than scheduled:
    /// they last longer (or shorter) in real time, and simulate the same.
    pub fn set_speed(&mut self, from_tick: Tick, percent: Percent, postpone: Duration) {
        self.speed
            .announce(from_tick, percent, postpone.as_nanos() as u64);
    }

    /// How late the next tick is against its schedule: real time owed
    /// beyond the tick due now (zero when on time or ahead). Zero while
    /// catching up: no schedule runs then (the clock starts when the
    /// catch-up ends), and the time the connection was lost is not owed.
    pub fn behind(&self) -> Duration {
        match self.phase {
            Phase::CatchingUp(_) => Duration::ZERO,
            Phase::Live => {
                Duration::from_nanos(self.clock.lag_ns().saturating_sub(self.clock.tick_ns()))
            }
        }
    }

    /// The game speed the next tick runs at.
    pub fn speed(&self) -> Percent {
        self.speed.current()
    }

    /// The lowest game speed any live tick ran at.
    pub fn slowest_speed(&self) -> Percent {
        self.speed.slowest()
    }

    /// Runs the next tick if it is due and its bundle is here. While
    /// catching up, every received bundle is due at once: game time is
    /// replayed as fast as the machine allows, then the clock takes over.
    pub fn advance(&mut self) -> Advance {
        match self.phase {
            Phase::CatchingUp(to) => self.advance_catching_up(to),
            Phase::Live => self.advance_live(),
        }
    }

    /// [`NetGame::advance`] while catching up: the next received bundle
    /// runs at once, and nothing is reported or measured. Once the world
    /// has reached `to` and no bundle is left, the game goes live.
    fn advance_catching_up(&mut self, to: Tick) -> Advance {
        if self.current.tick() >= to && self.buffer.buffered() == 0 {
            self.phase = Phase::Live;
            // The clock starts now: nothing to forgive.
            self.speed.enter(self.current.tick());
            self.clock = FixedStep::with_tick_ns(self.speed.tick_ns(), Policy::NETWORKED);
            return Advance::NotDue;
        }
        match self.buffer.poll() {
            Gate::Step(tick, bundle) => {
                let (now, _) = self.step(tick, &bundle);
                self.lag_after_step = self.clock.lag_ns();
                Advance::Ran {
                    tick: now,
                    report: None,
                    replaced: None,
                }
            }
            Gate::Stall(tick) => Advance::Stalled(tick),
        }
    }

    /// [`NetGame::advance`] when live: the next tick runs once the clock
    /// says it is due at its speed and its bundle is here; its hash is
    /// reported, a stall is counted, and how long it waited feeds the
    /// playout.
    fn advance_live(&mut self) -> Advance {
        // The world's tick is the next bundle's: it runs at its speed.
        let postpone = self.speed.enter(self.current.tick());
        self.clock.set_tick_ns(self.speed.tick_ns());
        self.clock.postpone(postpone);
        let behind = self.ticks_behind();
        if behind > 0 {
            self.clock.hurry(u64::from(behind) * self.clock.tick_ns());
            self.stats.caught_up_ticks += u64::from(behind);
        }
        if !self.clock.due() {
            return Advance::NotDue;
        }
        match self.buffer.poll() {
            Gate::Step(tick, bundle) => {
                let held = self.buffer.buffered() + 1;
                let due_from = self.clock.tick_ns().max(self.lag_after_step);
                let waited = (self.last_stall == Some(tick))
                    .then(|| self.clock.lag_ns().saturating_sub(due_from));
                let on_time = self.clock.lag_ns() < 2 * self.clock.tick_ns();
                let (now, hash) = self.step(tick, &bundle);
                self.clock.stepped();
                let report = (self.me.is_some() && now.0.is_multiple_of(self.hash_interval))
                    .then_some((now, hash));
                let replaced = self
                    .me
                    .filter(|me| bundle.substituted.contains(me))
                    .map(|_| tick);
                if replaced.is_some() {
                    self.stats.replaced_inputs += 1;
                }
                self.adapt_playout(tick, &bundle, waited, on_time.then_some(held));
                self.lag_after_step = self.clock.lag_ns();
                Advance::Ran {
                    tick: now,
                    report,
                    replaced,
                }
            }
            Gate::Stall(tick) => {
                if self.last_stall != Some(tick) {
                    self.last_stall = Some(tick);
                    self.stats.stalled_ticks += 1;
                }
                Advance::Stalled(tick)
            }
        }
    }

    /// Ticks of bundles received beyond both the inputs this player has
    /// sampled and the tick its clock has reached (its input delay
    /// ahead), when the server stood in for ours in the newest: the
    /// others are that far ahead of our clock, and our inputs came too
    /// late to complete those ticks. It happens when our clock started late (after a resume, or
    /// the last to go live after a rejoin) and, with stand-ins,
    /// nothing else would ever bring it back: every tick of ours would
    /// come late for the rest of the game. Networked play never discards
    /// time, and it must not lag behind the game for good either.
    fn ticks_behind(&self) -> u32 {
        let stood_in = match (self.me, self.buffer.newest()) {
            (Some(me), Some(newest)) => newest.substituted.contains(&me),
            _ => false,
        };
        if !stood_in {
            return 0;
        }
        let due = self.clock.lag_ns() / self.clock.tick_ns().max(1);
        let clock_through = self
            .buffer
            .next_tick()
            .plus(u32::try_from(due).unwrap_or(u32::MAX))
            .plus(self.buffer.input_delay());
        let expected = clock_through.max(self.buffer.next_local());
        self.buffer.received_through().0.saturating_sub(expected.0)
    }

    /// Simulates `tick` with its `bundle` (and the injected fault, from
    /// its tick on), keeps it in the history and counts it; returns the
    /// world's tick after the step and its hash.
    fn step(&mut self, tick: Tick, bundle: &Bundle) -> (Tick, u64) {
        self.previous.clone_from(&self.current);
        match self.fault.filter(|f| f.changes(tick.next())) {
            None => apply(&mut self.current, bundle),
            Some(fault) => {
                step_with_fault(&mut self.current, bundle, Some(fault), &mut |_, _| {});
                if fault.phase.is_none() && fault.value.is_none() {
                    self.current.nudge();
                }
            }
        }
        let now = self.current.tick();
        let hash = self.current.hash();
        self.history.record(bundle, &self.current, hash);
        self.stats.ticks += 1;
        debug_assert_eq!(now, tick.next());
        (now, hash)
    }

    /// This machine stopped for a while (a frame came long after the last):
    /// the inputs it has sent so far, and those the clock now says are
    /// overdue, went late because of it, not the network, so the input
    /// delay does not count them.
    pub fn hiccup(&mut self) {
        let through = self
            .buffer
            .next_tick()
            .plus(self.overdue_steps())
            .plus(self.buffer.input_delay());
        self.delay.hiccup(through.max(self.buffer.next_local()));
    }

    /// The ticks that need a local input while the game is stalled: those
    /// the clock's overdue steps would have sampled for (none for a
    /// spectator, or while catching up).
    pub fn local_ticks_due_while_stalled(&mut self) -> std::ops::Range<Tick> {
        if self.me.is_none() || self.phase != Phase::Live {
            return Tick(0)..Tick(0);
        }
        let overdue = self.overdue_steps();
        self.buffer.local_ticks_due_ahead(overdue)
    }

    /// Steps the clock says are due but have not run (at most
    /// [`MAX_OVERDUE_INPUTS`]): the inputs they would have sampled go out
    /// anyway.
    fn overdue_steps(&self) -> u32 {
        let overdue = self.clock.lag_ns() / self.clock.tick_ns().max(1);
        u32::try_from(overdue).map_or(MAX_OVERDUE_INPUTS, |o| o.min(MAX_OVERDUE_INPUTS))
    }

    /// The ticks that need a local input after the last [`Advance::Ran`]
    /// (none for a spectator).
    pub fn local_ticks_due(&mut self) -> std::ops::Range<Tick> {
        match self.me {
            Some(_) => self.buffer.local_ticks_due(),
            None => Tick(0)..Tick(0),
        }
    }

    /// Feeds the adaptive input delay with the latest link figures and
    /// the server's latest report of our own input slack; a changed delay
    /// applies from the next sample. A spectator has no delay to adapt,
    /// and a game catching up does not measure; a pinned delay stays.
    pub fn adapt_delay(&mut self, link: LinkFigures, slack: Option<Slack>) {
        if self.me.is_none() || self.phase != Phase::Live {
            return;
        }
        let (tick, next_local) = (self.current.tick(), self.buffer.next_local());
        self.delay
            .set_tick_length(Duration::from_nanos(self.clock.tick_ns()));
        if self.delay.update(tick, next_local, link, slack).is_some() {
            self.apply_delay();
        }
    }

    /// Feeds the playout delay with how tick `tick` ran: after waiting
    /// `waited` nanoseconds for `bundle`, or on time with `held` bundles in
    /// hand (`None` when it ran late for other reasons, such as a frame
    /// that came late). A raise postpones the clock and a lowering hurries
    /// it; the input delay moves with it, so the inputs still leave when
    /// they did. A pinned delay pins this too.
    fn adapt_playout(
        &mut self,
        tick: Tick,
        bundle: &Bundle,
        waited: Option<u64>,
        held: Option<usize>,
    ) {
        if self.delay.is_pinned() {
            return;
        }
        let tick_ns = self.clock.tick_ns();
        match (waited, held) {
            // A stand-in in the bundle: the wait was for a late peer.
            (Some(_), _) if !bundle.substituted.is_empty() => {}
            (Some(wait), _) => {
                if let Some(raise) = self.playout.stalled(tick, wait, tick_ns) {
                    self.clock.postpone(u64::from(raise) * tick_ns);
                    self.apply_delay();
                }
            }
            (None, Some(held)) => {
                if let Some(lower) = self.playout.on_time(tick, held) {
                    self.clock.hurry(u64::from(lower) * tick_ns);
                    self.apply_delay();
                }
            }
            (None, None) => {}
        }
    }

    /// The input delay in force: the controller's, plus the playout.
    fn apply_delay(&mut self) {
        self.buffer
            .set_input_delay(self.delay.current() + self.playout.ticks());
    }

    /// Ticks this client steps behind the schedule ([`Playout`]).
    pub fn playout(&self) -> u8 {
        self.playout.ticks()
    }

    /// Bundles received and not yet simulated: how far ahead of the
    /// ticks the network is (the net graph's slack), 0 when the next due
    /// tick will wait.
    pub fn bundles_held(&self) -> usize {
        self.buffer.buffered()
    }

    /// Whether the input delay adapts (false when pinned).
    pub fn delay_is_adaptive(&self) -> bool {
        !self.delay.is_pinned()
    }

    /// Ends the frame; the alpha is for drawing `previous`→`current`.
    pub fn end_frame(&mut self) -> FrameEnd {
        self.clock.end_frame()
    }

    /// Nanoseconds until the next tick is due (0 if one is due now).
    pub fn until_due_ns(&self) -> u64 {
        self.clock.until_due_ns()
    }

    /// The fixed-step clock, read-only: its lag and tick length tell a
    /// frontend when the next steps are due on wall time.
    pub fn clock(&self) -> &FixedStep {
        &self.clock
    }

    /// Ticks between sampling and simulating an input.
    pub fn input_delay(&self) -> u32 {
        self.buffer.input_delay()
    }

    /// How long a press takes to change what the player sees: the input
    /// delay; and when the game is drawn with frames of `frame`, on
    /// average half a tick until the press is sampled, a tick of
    /// interpolation (the newest state is reached only at the end of the
    /// tick after it), and half a frame until the frame that shows it.
    pub fn input_lag(&self, frame: Option<Duration>) -> Duration {
        // A tick lasts longer while the game runs slower.
        let tick = Duration::from_nanos(self.clock.tick_ns());
        let delay = tick * self.input_delay();
        match frame {
            Some(frame) => delay + tick / 2 + tick + frame / 2,
            None => delay,
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> GameStats {
        self.stats
    }

    /// The bundle of the last simulated tick.
    pub fn last_bundle(&self) -> Option<&Bundle> {
        self.history.latest().map(|remembered| &remembered.bundle)
    }

    /// Our name ("spectator" when watching).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Readable names of players.
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

    /// Whether we are still in the game: a spectator always is; a player
    /// until the server removes its disc (a rejoining player only from its
    /// first tick on).
    pub fn is_playing(&self) -> bool {
        match self.me {
            None => true,
            Some(me) => self.current.tick() <= self.first_input_tick || self.current.has_player(me),
        }
    }
}

mod desync;
mod fault;
#[cfg(test)]
mod tests;

use fault::step_with_fault;
pub use fault::Fault;
