//! One networked game as the frontend drives it: the world, the lockstep
//! gate and the fixed-step clock, glued in the order of flipcode's loop.
//!
//! No SDL2, no sockets, no clock: the frontend (window or headless) passes
//! the elapsed time in, asks [`NetGame::advance`] until it says otherwise,
//! hands each sampled local input back, and draws `previous`/`current` at
//! the returned alpha. The server's speed announcements
//! ([`NetGame::set_speed`]) set the clock's tick length for the ticks
//! from theirs on.

use std::time::Duration;

use lockstep_protocol::{
    Bundle, DesyncNotice, GameSpec, Input, Percent, PlayerId, Slack, Start, Tick, MAX_TICK_HASHES,
};

use crate::determinism::desync::DesyncDump;
use crate::determinism::history::{History, DEFAULT_HISTORY};
use crate::game::{apply, apply_phases, Game, Setup, SetupError};
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
        /// `hash_interval` ticks.
        report: Option<(Tick, u64)>,
        /// The bundle's tick (`tick - 1`) when our input in it is the
        /// server's stand-in ([`Bundle::substituted`]): ours reached the
        /// server too late. Not while catching up with history.
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
}

/// Client-side options of a networked game.
#[derive(Debug, Clone, Copy)]
pub struct GameOptions {
    /// Ticks of snapshots kept for desync dumps.
    pub history: usize,
    /// One-ulp changes that make this client diverge (fault injection for
    /// desync tests).
    pub fault: Option<Fault>,
    /// Fix the input delay instead of adapting it (`--input-delay`).
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

/// A fault to inject: [`Game::nudge`] in every step from the one that
/// reaches `tick` on.
///
/// Every step, not once: a machine that computes differently does so
/// again on the next tick, and a single one-ulp change can vanish before
/// the next hash check (a wall clamps the nudged coordinate, a sum rounds
/// it away): then no desync is seen at all. In the ball game, 37 of 400
/// single nudges were gone 15 ticks later, a nudge in every step never
/// (`lockstep_sim`'s tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// The first tick whose step is changed.
    pub tick: Tick,
    /// After which phase of the step ([`Game::step_phases`]); `None`:
    /// after the whole step, outside the simulation, as a stray write to
    /// memory would.
    pub phase: Option<&'static str>,
}

impl Fault {
    /// Whether the step that reaches `tick` is changed.
    fn changes(self, tick: Tick) -> bool {
        tick >= self.tick
    }
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
    /// while the game still catches up was due from then, not from its
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
    /// Ticks of history to fast-forward through before playing live.
    catch_up: Option<Tick>,
}

impl<G: Game> NetGame<G> {
    /// A game as described by the server's Start, if it is a game of `G`
    /// with settings `G` reads. [`GameOptions::pinned_delay`] fixes the
    /// input delay instead of adapting it.
    pub fn new(start: &Start, options: GameOptions) -> Result<NetGame<G>, SetupError> {
        let setup = Setup::from_start::<G>(start)?;
        Ok(NetGame::from_world(start, options, G::start(&setup)))
    }

    /// A game joined from a snapshot: `world` is the state after
    /// `world.tick()` ticks (the server's verified snapshot), and the
    /// bundles from that tick on follow. Fast-forwarding then costs the
    /// ticks since the snapshot, not since the game began.
    pub fn from_world(start: &Start, options: GameOptions, world: G) -> NetGame<G> {
        let delay = DelayController::new(
            start.input_delay,
            start.tick_rate,
            options.pinned_delay,
            start.first_input_tick,
        );
        // The starting state is kept too: the first tick's step can be
        // redone phase by phase, and tick 0's hash compared.
        let mut history = History::new(options.history);
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
            catch_up: (start.history > 0).then_some(Tick(start.history)),
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
        self.catch_up = Some(Tick(start.history).next());
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
    pub fn world_at(&self, tick: Tick) -> Option<&G> {
        self.history.at(tick).map(|remembered| &remembered.world)
    }

    /// Stores bundles received from the server.
    pub fn receive(&mut self, first_tick: Tick, bundles: Vec<Bundle>) {
        self.buffer.receive(first_tick, bundles);
    }

    /// Starts a frame after `elapsed_ns` of real time.
    pub fn begin_frame(&mut self, elapsed_ns: u64) {
        self.clock.begin_frame(elapsed_ns);
    }

    /// `(done, total)` while fast-forwarding through the history of a game
    /// joined late.
    pub fn catching_up(&self) -> Option<(u32, u32)> {
        self.catch_up.map(|to| (self.current.tick().0, to.0))
    }

    /// The server's announcement that ticks from `from_tick` on run at
    /// `percent` of the nominal speed, `postpone` later than scheduled:
    /// they last longer (or shorter) in real time, and simulate the same.
    pub fn set_speed(&mut self, from_tick: Tick, percent: Percent, postpone: Duration) {
        self.speed
            .announce(from_tick, percent, postpone.as_nanos() as u64);
    }

    /// How late the next tick is against its schedule: real time owed
    /// beyond the tick due now (zero when on time or ahead).
    pub fn behind(&self) -> Duration {
        Duration::from_nanos(self.clock.lag_ns().saturating_sub(self.clock.tick_ns()))
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
        if let Some(to) = self.catch_up {
            if self.current.tick() >= to && self.buffer.buffered() == 0 {
                self.catch_up = None;
                // The clock starts now: nothing to forgive.
                self.speed.enter(self.current.tick());
                self.clock = FixedStep::with_tick_ns(self.speed.tick_ns(), Policy::NETWORKED);
                return Advance::NotDue;
            }
        } else {
            // The world's tick is the next bundle's: it runs at its speed.
            let postpone = self.speed.enter(self.current.tick());
            self.clock.set_tick_ns(self.speed.tick_ns());
            self.clock.postpone(postpone);
            if !self.clock.due() {
                return Advance::NotDue;
            }
        }
        match self.buffer.poll() {
            Gate::Step(tick, bundle) => {
                let held = self.buffer.buffered() + 1;
                let due_from = self.clock.tick_ns().max(self.lag_after_step);
                let waited = (self.last_stall == Some(tick))
                    .then(|| self.clock.lag_ns().saturating_sub(due_from));
                let on_time = self.clock.lag_ns() < 2 * self.clock.tick_ns();
                self.previous.clone_from(&self.current);
                match self.fault.filter(|f| f.changes(tick.next())) {
                    None => apply(&mut self.current, &bundle),
                    Some(fault) => {
                        step_with_fault(&mut self.current, &bundle, Some(fault), &mut |_, _| {});
                        if fault.phase.is_none() {
                            self.current.nudge();
                        }
                    }
                }
                let now = self.current.tick();
                let hash = self.current.hash();
                self.history.record(&bundle, &self.current, hash);
                if self.catch_up.is_none() {
                    self.clock.stepped();
                }
                self.stats.ticks += 1;
                debug_assert_eq!(now, tick.next());
                let report = (self.me.is_some()
                    && self.catch_up.is_none()
                    && now.0.is_multiple_of(self.hash_interval))
                .then_some((now, hash));
                let replaced = self
                    .me
                    .filter(|me| self.catch_up.is_none() && bundle.substituted.contains(me))
                    .map(|_| tick);
                if replaced.is_some() {
                    self.stats.replaced_inputs += 1;
                }
                if self.catch_up.is_none() {
                    self.adapt_playout(tick, &bundle, waited, on_time.then_some(held));
                }
                self.lag_after_step = self.clock.lag_ns();
                Advance::Ran {
                    tick: now,
                    report,
                    replaced,
                }
            }
            Gate::Stall(tick) => {
                if self.catch_up.is_none() && self.last_stall != Some(tick) {
                    self.last_stall = Some(tick);
                    self.stats.stalled_ticks += 1;
                }
                Advance::Stalled(tick)
            }
        }
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
    /// spectator, or while fast-forwarding a late join).
    pub fn local_ticks_due_while_stalled(&mut self) -> std::ops::Range<Tick> {
        if self.me.is_none() || self.catch_up.is_some() {
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
    /// applies from the next sample.
    pub fn adapt_delay(&mut self, link: LinkFigures, slack: Option<Slack>) {
        if self.me.is_none() || self.catch_up.is_some() {
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

    /// The dump of `tick` (one the server named in a desync), if it is
    /// still in the history, with its step redone phase by phase. An
    /// injected fault inside a phase is redone too, as a machine that
    /// computes differently would compute differently again; one after the
    /// step is not, as memory written by something else would not be.
    pub fn desync_dump(&self, tick: Tick) -> Option<DesyncDump<G>> {
        let mut dump = self.history.dump(tick, &self.spec, self.me, &self.name)?;
        dump.phases = self.history.phases(tick, |game, bundle, after| {
            step_with_fault(game, bundle, self.fault, after);
        });
        Some(dump)
    }

    /// What a player tells the server after a desync notice: the hash of
    /// every kept tick from `notice.since` to `notice.tick` (at most
    /// [`MAX_TICK_HASHES`], the latest ones), as the tick of the first and
    /// the hashes. `None` for a spectator, or if none is kept.
    pub fn tick_hashes(&self, notice: &DesyncNotice) -> Option<(Tick, Vec<u64>)> {
        self.me?;
        let span = u32::try_from(MAX_TICK_HASHES).unwrap_or(u32::MAX);
        let from = notice
            .since
            .max(Tick(notice.tick.0.saturating_sub(span - 1)));
        self.history.hashes(from, notice.tick)
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

/// Applies `bundle` phase by phase, calling `after` after each; when
/// `fault` names a phase and changes this step, the game is nudged there
/// first.
fn step_with_fault<G: Game>(
    game: &mut G,
    bundle: &Bundle,
    fault: Option<Fault>,
    after: &mut dyn FnMut(&'static str, &mut G),
) {
    let target = game.tick().next();
    let phase = fault.filter(|f| f.changes(target)).and_then(|f| f.phase);
    apply_phases(game, bundle, &mut |name, game| {
        if phase == Some(name) {
            game.nudge();
        }
        after(name, game);
    });
}

#[cfg(test)]
mod tests {
    use lockstep_protocol::{Buttons, PlayerInput, RosterEntry};

    use super::*;
    use crate::testing::Tally;

    /// A tick at 60 Hz, in nanoseconds.
    const TICK_NS: u64 = 1_000_000_000 / 60;

    fn start(you: Option<PlayerId>, history: u32) -> Start {
        Start {
            seed: 7,
            tick_rate: 60,
            input_delay: 3,
            spec: crate::spec_of::<Tally>(&()),
            roster: (0..2)
                .map(|id| RosterEntry {
                    id: PlayerId(id),
                    name: format!("p{id}"),
                })
                .collect(),
            hash_interval: 15,
            you,
            first_input_tick: Tick(history),
            history,
            snapshot: None,
            resume: None,
        }
    }

    /// Both players holding `buttons`.
    fn bundle(buttons: u8) -> Bundle {
        Bundle {
            inputs: (0..2)
                .map(|id| PlayerInput {
                    player: PlayerId(id),
                    input: Input {
                        buttons: Buttons(buttons),
                        axes: None,
                    },
                })
                .collect(),
            ..Bundle::default()
        }
    }

    /// Runs one frame of `elapsed_ns`; returns the ticks that ran and the
    /// reports they asked for.
    fn frame(game: &mut NetGame<Tally>, elapsed_ns: u64) -> (Vec<u32>, Vec<(Tick, u64)>) {
        game.begin_frame(elapsed_ns);
        let (mut ran, mut reports) = (Vec::new(), Vec::new());
        while let Advance::Ran { tick, report, .. } = game.advance() {
            ran.push(tick.0);
            reports.extend(report);
            game.local_ticks_due();
        }
        game.end_frame();
        (ran, reports)
    }

    #[test]
    fn a_tick_runs_only_when_it_is_due_and_its_bundle_is_here() {
        let mut game =
            NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), GameOptions::default()).unwrap();
        assert_eq!(frame(&mut game, TICK_NS).0, Vec::<u32>::new());
        assert_eq!(game.stats().stalled_ticks, 1);
        game.receive(Tick(0), (0..3).map(bundle).collect());
        // Two ticks of real time are owed by now, and both bundles are here.
        assert_eq!(frame(&mut game, TICK_NS).0, vec![1, 2]);
        // The third bundle waits for its time.
        assert_eq!(frame(&mut game, 0).0, Vec::<u32>::new());
        assert_eq!(game.advance(), Advance::NotDue);
        assert_eq!(frame(&mut game, TICK_NS).0, vec![3]);
        assert_eq!(game.stats().stalled_ticks, 1);
    }

    #[test]
    fn a_player_reports_its_hash_every_hash_interval_ticks() {
        let mut game =
            NetGame::<Tally>::new(&start(Some(PlayerId(1)), 0), GameOptions::default()).unwrap();
        game.receive(Tick(0), (0..30).map(|_| bundle(1)).collect());
        let (ran, reports) = frame(&mut game, 30 * TICK_NS);
        assert_eq!(ran.len(), 30);
        let ticks: Vec<u32> = reports.iter().map(|(t, _)| t.0).collect();
        assert_eq!(ticks, vec![15, 30]);
        assert_eq!(reports[1].1, game.current.hash());
    }

    #[test]
    fn a_spectator_sends_no_inputs_reports_nothing_and_is_never_dropped() {
        let mut game = NetGame::<Tally>::new(&start(None, 0), GameOptions::default()).unwrap();
        assert!(game.initial_inputs().is_empty());
        assert_eq!(game.name(), "spectator");
        game.receive(Tick(0), (0..20).map(|_| bundle(2)).collect());
        game.begin_frame(20 * TICK_NS);
        while let Advance::Ran { report, .. } = game.advance() {
            assert_eq!(report, None);
            assert!(game.local_ticks_due().is_empty());
        }
        assert_eq!(game.current.tick(), Tick(20));
        assert!(game.is_playing());
    }

    #[test]
    fn a_late_joiner_fast_forwards_through_the_history_then_follows_the_clock() {
        let mut game =
            NetGame::<Tally>::new(&start(Some(PlayerId(1)), 100), GameOptions::default()).unwrap();
        assert_eq!(game.initial_inputs().first().map(|(t, _)| t.0), Some(100));
        game.receive(Tick(0), (0..100).map(|_| bundle(1)).collect());
        // No real time has passed, yet the whole history runs at once.
        let (ran, reports) = frame(&mut game, 0);
        assert_eq!(ran.len(), 100);
        assert!(reports.is_empty(), "no reports while catching up");
        assert_eq!(game.catching_up(), None);
        game.receive(Tick(100), vec![bundle(1)]);
        assert_eq!(frame(&mut game, 0).0, Vec::<u32>::new());
        assert_eq!(frame(&mut game, TICK_NS).0, vec![101]);
    }

    #[test]
    fn a_joiner_from_a_snapshot_fast_forwards_only_the_bundles_after_it_to_the_same_state() {
        let history: Vec<Bundle> = (0..100).map(|t| bundle((t % 7) as u8)).collect();
        let mut whole =
            NetGame::<Tally>::new(&start(Some(PlayerId(1)), 100), GameOptions::default()).unwrap();
        whole.receive(Tick(0), history.clone());
        frame(&mut whole, 0);
        // The state after 60 ticks, as a player would send it.
        let snapshot = whole.world_at(Tick(60)).expect("still in the ring").clone();
        let mut joined = NetGame::<Tally>::from_world(
            &start(Some(PlayerId(1)), 100),
            GameOptions::default(),
            snapshot,
        );
        joined.receive(Tick(60), history[60..].to_vec());
        let (ran, _) = frame(&mut joined, 0);
        assert_eq!(ran.len(), 40, "only the ticks after the snapshot");
        assert_eq!(joined.catching_up(), None);
        assert_eq!(joined.current, whole.current);
        assert_eq!(joined.current.hash(), whole.current.hash());
    }

    #[test]
    fn a_reconnected_player_keeps_its_world_and_restarts_its_clock_with_the_resumed_game() {
        let mut game =
            NetGame::<Tally>::new(&start(Some(PlayerId(1)), 0), GameOptions::default()).unwrap();
        game.receive(Tick(0), (0..12).map(|t| bundle(t as u8)).collect());
        assert_eq!(frame(&mut game, 10 * TICK_NS).0.len(), 10);
        // The server dies with bundles 10 and 11 held and not yet due; the
        // game waits five seconds for the one restarted from its replay.
        frame(&mut game, 5_000_000_000);
        assert_eq!(game.current.tick(), Tick(12));
        let stalls = game.stats().stalled_ticks;
        let ticks = game.stats().ticks;
        let before = game.current.clone();
        // The replay ends at bundle 14: the restarted server sends 12..14
        // and the game goes on at 14, where our inputs start again.
        let mut resumed = start(Some(PlayerId(1)), 14);
        resumed.resume = Some(Tick(12));
        game.resume(&resumed);
        let inputs: Vec<u32> = game.initial_inputs().iter().map(|(t, _)| t.0).collect();
        assert_eq!(inputs, [14, 15, 16]);
        game.receive(Tick(12), vec![bundle(12), bundle(13)]);
        // The bundles it lacked run at once, and it waits for tick 14's
        // without counting a stall or owing the five seconds.
        assert_eq!(frame(&mut game, 0).0, vec![13, 14]);
        assert_eq!(frame(&mut game, TICK_NS).0, Vec::<u32>::new());
        assert_eq!(game.stats().stalled_ticks, stalls);
        assert!(game.catching_up().is_some());
        game.receive(Tick(14), vec![bundle(14), bundle(15), bundle(16)]);
        assert_eq!(frame(&mut game, 0).0, vec![15, 16, 17]);
        assert_eq!(game.catching_up(), None);
        game.receive(Tick(17), vec![bundle(17)]);
        assert_eq!(frame(&mut game, 0).0, Vec::<u32>::new());
        assert_eq!(frame(&mut game, TICK_NS).0, vec![18]);
        assert_eq!(game.stats().ticks, ticks + 6);
        // The same world as one that never lost the server.
        let mut steady =
            NetGame::<Tally>::new(&start(Some(PlayerId(1)), 0), GameOptions::default()).unwrap();
        steady.receive(Tick(0), (0..18).map(|t| bundle(t as u8)).collect());
        frame(&mut steady, 30 * TICK_NS);
        assert_eq!(steady.current, game.current);
        assert_ne!(before, game.current);
    }

    #[test]
    fn an_announced_speed_paces_the_ticks_from_its_tick_on_and_not_before() {
        let mut game =
            NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), GameOptions::default()).unwrap();
        game.receive(Tick(0), (0..10).map(bundle).collect());
        game.set_speed(Tick(3), Percent(50), Duration::ZERO);
        assert_eq!(game.speed(), Percent::FULL);
        // Ticks 0, 1 and 2 at full speed: one tick of real time each.
        for tick in 1..=3 {
            assert_eq!(frame(&mut game, TICK_NS).0, vec![tick]);
        }
        // From tick 3 on at half speed: each waits twice as long.
        assert_eq!(game.speed(), Percent(50));
        assert_eq!(frame(&mut game, TICK_NS).0, Vec::<u32>::new());
        assert_eq!(frame(&mut game, TICK_NS).0, vec![4]);
        assert_eq!(game.until_due_ns(), 2 * TICK_NS);
        assert_eq!(frame(&mut game, 2 * TICK_NS).0, vec![5]);
        assert_eq!(game.stats().stalled_ticks, 0);
        assert_eq!(game.slowest_speed(), Percent(50));

        // Only the pacing changed: the same bundles at full speed give the
        // same world.
        let mut full =
            NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), GameOptions::default()).unwrap();
        full.receive(Tick(0), (0..10).map(bundle).collect());
        assert_eq!(frame(&mut full, 5 * TICK_NS).0, vec![1, 2, 3, 4, 5]);
        assert_eq!(full.current.hash(), game.current.hash());
    }

    #[test]
    fn a_late_joiner_follows_the_speed_in_force_once_caught_up() {
        let mut game =
            NetGame::<Tally>::new(&start(Some(PlayerId(1)), 100), GameOptions::default()).unwrap();
        game.set_speed(Tick(50), Percent(25), Duration::from_secs(9));
        game.receive(Tick(0), (0..100).map(|_| bundle(1)).collect());
        // The history runs at once, whatever the speed...
        assert_eq!(frame(&mut game, 0).0.len(), 100);
        game.receive(Tick(100), vec![bundle(1)]);
        // ...and live ticks take four times their nominal length.
        assert_eq!(frame(&mut game, 3 * TICK_NS).0, Vec::<u32>::new());
        assert_eq!(frame(&mut game, TICK_NS).0, vec![101]);
    }

    #[test]
    fn a_postponed_schedule_makes_the_ticks_from_the_change_on_due_that_much_later() {
        let mut game =
            NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), GameOptions::default()).unwrap();
        // Half a second of stall: the game is 29 ticks behind.
        assert_eq!(frame(&mut game, 30 * TICK_NS).0, Vec::<u32>::new());
        assert_eq!(game.behind(), Duration::from_nanos(29 * TICK_NS));
        // The server slows the game to half speed from tick 2 and forgives
        // what the game will be behind then: 27 ticks, once ticks 0 and 1
        // have run late.
        game.set_speed(Tick(2), Percent(50), Duration::from_nanos(27 * TICK_NS));
        game.receive(Tick(0), (0..10).map(bundle).collect());
        assert_eq!(frame(&mut game, 0).0, vec![1, 2]);
        // Back on schedule: tick 2, twice as long, is due in one more
        // nominal tick, then every two.
        assert_eq!(game.behind(), Duration::ZERO);
        assert_eq!(game.until_due_ns(), TICK_NS);
        assert_eq!(frame(&mut game, TICK_NS).0, vec![3]);
        assert_eq!(frame(&mut game, TICK_NS).0, Vec::<u32>::new());
        assert_eq!(frame(&mut game, TICK_NS).0, vec![4]);
    }

    /// A faulty and an honest player, both played through 10 ticks.
    fn faulty_and_honest(fault: Fault) -> (NetGame<Tally>, NetGame<Tally>) {
        faulty_and_honest_for(fault, 1)
    }

    /// A faulty and an honest player, both played through `tens` times
    /// 10 ticks.
    fn faulty_and_honest_for(fault: Fault, tens: u32) -> (NetGame<Tally>, NetGame<Tally>) {
        let options = GameOptions {
            fault: Some(fault),
            ..GameOptions::default()
        };
        let mut faulty = NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), options).unwrap();
        let mut honest =
            NetGame::<Tally>::new(&start(Some(PlayerId(1)), 0), GameOptions::default()).unwrap();
        for game in [&mut faulty, &mut honest] {
            for ten in 0..tens {
                game.receive(Tick(10 * ten), (0..10).map(|_| bundle(3)).collect());
                frame(game, 10 * TICK_NS);
            }
        }
        (faulty, honest)
    }

    fn phase_names(dump: &DesyncDump<Tally>) -> Vec<&str> {
        dump.phases.iter().map(|p| p.phase.as_str()).collect()
    }

    #[test]
    fn an_injected_fault_changes_the_state_at_its_tick_and_its_dump_holds_it() {
        let (faulty, honest) = faulty_and_honest(Fault {
            tick: Tick(5),
            phase: None,
        });
        assert_ne!(faulty.current.hash(), honest.current.hash());
        let (Some(dump), Some(clean)) = (faulty.desync_dump(Tick(5)), honest.desync_dump(Tick(5)))
        else {
            panic!("tick 5 is in both histories");
        };
        assert_eq!((dump.player, dump.tick), (Some(PlayerId(0)), Tick(5)));
        let diffs = crate::determinism::diff::diff_worlds(&clean.world, &dump.world);
        assert_eq!(diffs.len(), 1, "{diffs:?}");
        assert_eq!(diffs[0].path, "drift");
        // A change after the step is not redone: every phase agrees with
        // the honest machine, and the faulty one's last phase is not its
        // own recorded hash.
        assert_eq!(
            phase_names(&dump),
            ["before", "roster", "counters", "drift"]
        );
        assert_eq!(dump.phases, clean.phases);
        assert_eq!(clean.phases.last().map(|p| &p.hash), Some(&clean.hash));
        assert_ne!(dump.phases.last().map(|p| &p.hash), Some(&dump.hash));
    }

    #[test]
    fn a_fault_inside_a_phase_is_redone_in_the_dump_and_shows_from_that_phase() {
        let (faulty, honest) = faulty_and_honest(Fault {
            tick: Tick(5),
            phase: Some("counters"),
        });
        assert_ne!(faulty.current.hash(), honest.current.hash());
        let (Some(dump), Some(clean)) = (faulty.desync_dump(Tick(5)), honest.desync_dump(Tick(5)))
        else {
            panic!("tick 5 is in both histories");
        };
        let differ: Vec<bool> = dump
            .phases
            .iter()
            .zip(&clean.phases)
            .map(|(a, b)| a.hash != b.hash)
            .collect();
        assert_eq!(differ, [false, false, true, true]);
        assert_eq!(dump.phases.last().map(|p| &p.hash), Some(&dump.hash));
        // Tick 4 was computed alike.
        assert_eq!(
            faulty.desync_dump(Tick(4)).map(|d| d.hash),
            honest.desync_dump(Tick(4)).map(|d| d.hash)
        );
    }

    #[test]
    fn an_injected_fault_goes_on_in_every_step_from_its_tick() {
        // Tally's drift converges on one value, rounding a single one-ulp
        // nudge away: only a fault that goes on still shows ticks later.
        for phase in [None, Some("drift")] {
            let (faulty, honest) = faulty_and_honest_for(
                Fault {
                    tick: Tick(3),
                    phase,
                },
                12,
            );
            assert_eq!(faulty.current.tick(), Tick(120));
            assert_ne!(faulty.current.hash(), honest.current.hash(), "{phase:?}");
        }
    }

    #[test]
    fn after_a_notice_a_player_answers_with_the_hashes_since_the_last_check() {
        let (faulty, honest) = faulty_and_honest(Fault {
            tick: Tick(3),
            phase: None,
        });
        let notice = DesyncNotice {
            tick: Tick(9),
            diverged: vec![PlayerId(0)],
            majority: None,
            since: Tick(0),
        };
        let (Some((first, ours)), Some((_, theirs))) =
            (faulty.tick_hashes(&notice), honest.tick_hashes(&notice))
        else {
            panic!("both players answer");
        };
        // Tick 0, the starting state, is kept too.
        assert_eq!((first, ours.len()), (Tick(0), 10));
        let parted = ours.iter().zip(&theirs).position(|(a, b)| a != b);
        assert_eq!(parted, Some(3));
        assert!(ours[3..].iter().zip(&theirs[3..]).all(|(a, b)| a != b));
        let spectator = NetGame::<Tally>::new(&start(None, 0), GameOptions::default()).unwrap();
        assert_eq!(spectator.tick_hashes(&notice), None);
    }

    #[test]
    fn a_stalled_player_still_sends_the_inputs_the_clock_says_are_due() {
        let options = GameOptions {
            pinned_delay: Some(2),
            ..GameOptions::default()
        };
        let mut game = NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), options).unwrap();
        // Ticks 0 and 1 get the neutral initial inputs.
        assert_eq!(game.initial_inputs().len(), 2);
        game.receive(Tick(0), vec![bundle(1)]);
        // Four ticks of real time: tick 0 runs, then bundle 1 is missing.
        let (ran, _) = frame(&mut game, 4 * TICK_NS);
        assert_eq!(ran, vec![1]);
        game.begin_frame(0);
        assert_eq!(game.advance(), Advance::Stalled(Tick(1)));
        // Three steps are overdue: their inputs (ticks 3 to 5) are due now,
        // after tick 2's, which the step of tick 0 asked for.
        assert_eq!(game.local_ticks_due_while_stalled(), Tick(3)..Tick(6));
        assert_eq!(game.local_ticks_due_while_stalled(), Tick(6)..Tick(6));
        // Once the bundles come, the steps catch up without asking again.
        game.receive(Tick(1), vec![bundle(1), bundle(1), bundle(1)]);
        while let Advance::Ran { .. } = game.advance() {
            assert!(game.local_ticks_due().is_empty());
        }
        let spectator =
            &mut NetGame::<Tally>::new(&start(None, 0), GameOptions::default()).unwrap();
        assert!(spectator.local_ticks_due_while_stalled().is_empty());
    }

    /// Plays tick `tick` after its bundle was `wait_ns` late, then the
    /// next `more` ticks on time.
    fn late_bundle(game: &mut NetGame<Tally>, tick: u32, late: Bundle, wait_ns: u64, more: u32) {
        assert_eq!(game.current.tick(), Tick(tick));
        assert_eq!(frame(game, TICK_NS).0, Vec::<u32>::new(), "waits for it");
        assert_eq!(frame(game, wait_ns).0, Vec::<u32>::new());
        game.receive(Tick(tick), vec![late]);
        game.receive(Tick(tick + 1), vec![bundle(0); more as usize]);
        game.begin_frame(0);
        assert!(matches!(game.advance(), Advance::Ran { .. }));
        game.local_ticks_due();
        while game.current.tick() < Tick(tick + 1 + more) {
            frame(game, TICK_NS);
        }
    }

    /// Player 0's game, 100 ticks played on time.
    fn on_time_to_100() -> NetGame<Tally> {
        let mut game =
            NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), GameOptions::default()).unwrap();
        game.receive(Tick(0), vec![bundle(0); 100]);
        for _ in 0..100 {
            frame(&mut game, TICK_NS);
        }
        game
    }

    #[test]
    fn bundles_late_on_our_own_link_raise_the_playout_and_the_delay_with_it() {
        let mut game = on_time_to_100();
        assert_eq!((game.playout(), game.input_delay()), (0, 3));
        // One stall of 40 ms is within the budget.
        late_bundle(&mut game, 100, bundle(0), 40_000_000, 199);
        assert_eq!(game.playout(), 0);
        // The second within the window covers it: three ticks, and the
        // 40 ms just waited are forgiven instead of caught up.
        late_bundle(&mut game, 300, bundle(0), 40_000_000, 0);
        assert_eq!((game.playout(), game.input_delay()), (3, 6));
        // (It waited a little more than 40 ms: the frames before left a
        // remainder of a tick on the clock.)
        assert_eq!(game.clock().lag_ns(), 0);
        let hold = game.clock().hold_ns();
        assert!(hold > 0 && hold <= 3 * TICK_NS - 40_000_000, "{hold}");
    }

    #[test]
    fn a_stall_while_catching_up_counts_only_its_own_wait() {
        let mut game = on_time_to_100();
        // A 300 ms wait for bundle 100, then bundle 101 comes 10 ms after
        // 100 while the game is still 300 ms behind: its own wait is 10 ms,
        // and two stalls of 300 and 10 ms call for one tick of playout,
        // not for the cap.
        assert_eq!(frame(&mut game, TICK_NS).0, Vec::<u32>::new());
        assert_eq!(frame(&mut game, 300_000_000).0, Vec::<u32>::new());
        game.receive(Tick(100), vec![bundle(0)]);
        assert_eq!(frame(&mut game, 0).0, vec![101]);
        game.begin_frame(10_000_000);
        assert_eq!(game.advance(), Advance::Stalled(Tick(101)));
        game.receive(Tick(101), vec![bundle(0)]);
        assert!(matches!(game.advance(), Advance::Ran { .. }));
        assert_eq!(game.playout(), 1);
    }

    #[test]
    fn a_wait_for_a_stand_in_is_a_late_peer_and_raises_no_playout() {
        let mut game = on_time_to_100();
        let stood_in = Bundle {
            substituted: vec![PlayerId(1)],
            ..bundle(0)
        };
        late_bundle(&mut game, 100, stood_in.clone(), 40_000_000, 99);
        late_bundle(&mut game, 200, stood_in, 40_000_000, 99);
        assert_eq!((game.playout(), game.input_delay()), (0, 3));
    }

    #[test]
    fn the_input_lag_is_the_delay_plus_sampling_interpolation_and_a_frame_when_drawn() {
        let options = GameOptions {
            pinned_delay: Some(3),
            ..GameOptions::default()
        };
        let game = NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), options).unwrap();
        let tick = Duration::from_secs(1) / 60;
        assert_eq!(game.input_lag(None), 3 * tick);
        let frame = Duration::from_millis(10);
        assert_eq!(
            game.input_lag(Some(frame)),
            3 * tick + tick / 2 + tick + Duration::from_millis(5)
        );
    }

    #[test]
    fn a_player_is_told_when_the_server_stood_in_for_its_input() {
        let mut bundles: Vec<Bundle> = (0..4).map(bundle).collect();
        bundles[2].substituted = vec![PlayerId(1)];
        let mut late =
            NetGame::<Tally>::new(&start(Some(PlayerId(1)), 0), GameOptions::default()).unwrap();
        let mut other =
            NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), GameOptions::default()).unwrap();
        for game in [&mut late, &mut other] {
            game.receive(Tick(0), bundles.clone());
            game.begin_frame(4 * TICK_NS);
        }
        let mut replaced = Vec::new();
        while let Advance::Ran { replaced: r, .. } = late.advance() {
            replaced.extend(r);
        }
        assert_eq!(replaced, vec![Tick(2)]);
        assert_eq!(late.stats().replaced_inputs, 1);
        while let Advance::Ran { replaced, .. } = other.advance() {
            assert_eq!(replaced, None);
        }
        assert_eq!(other.stats().replaced_inputs, 0);
        // The bundle is applied as it is: the same game either way.
        assert_eq!(late.current.hash(), other.current.hash());
    }

    #[test]
    fn a_player_plays_until_its_departure_is_bundled() {
        let mut game =
            NetGame::<Tally>::new(&start(Some(PlayerId(1)), 0), GameOptions::default()).unwrap();
        let mut gone = bundle(0);
        gone.left = vec![PlayerId(1)];
        game.receive(Tick(0), vec![bundle(0), gone]);
        frame(&mut game, TICK_NS);
        assert!(game.is_playing());
        frame(&mut game, TICK_NS);
        assert!(!game.is_playing());
    }
}
