//! One networked game as the frontend drives it: the world, the lockstep
//! gate and the fixed-step clock, glued in the order of flipcode's loop.
//!
//! No SDL2, no sockets, no clock: the frontend (window or headless) passes
//! the elapsed time in, asks [`NetGame::advance`] until it says otherwise,
//! hands each sampled local input back, and draws `previous`/`current` at
//! the returned alpha.

use std::time::Duration;

use lockstep_protocol::{Bundle, DesyncNotice, Input, PlayerId, Start, Tick};

use crate::accumulator::{FixedStep, FrameEnd, Policy};
use crate::desync::DesyncDump;
use crate::game::{apply, Game, Setup};
use crate::gate::{Gate, InputBuffer};
use crate::history::{History, DEFAULT_HISTORY};
use crate::input_delay::DelayController;

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
    /// Fix the input delay instead of adapting it (`--input-delay`).
    pub pinned_delay: Option<u8>,
}

impl Default for GameOptions {
    fn default() -> Self {
        GameOptions {
            history: DEFAULT_HISTORY,
            inject_desync_at: None,
            pinned_delay: None,
        }
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
    delay: DelayController,
    stats: GameStats,
    last_stall: Option<Tick>,
    history: History<G>,
    hash_interval: u32,
    tick_rate: u16,
    inject_desync_at: Option<Tick>,
    name: String,
    first_input_tick: Tick,
    /// Ticks of history to fast-forward through before playing live.
    catch_up: Option<Tick>,
}

impl<G: Game> NetGame<G> {
    /// A game as described by the server's Start. `pinned_delay` fixes the
    /// input delay instead of adapting it.
    pub fn new(start: &Start, options: GameOptions) -> NetGame<G> {
        let world = G::start(&Setup::from_start(start));
        let delay = DelayController::new(start.input_delay, start.tick_rate, options.pinned_delay);
        NetGame {
            previous: world.clone(),
            current: world,
            roster: start
                .roster
                .iter()
                .map(|r| (r.id, r.name.clone()))
                .collect(),
            me: start.you,
            buffer: InputBuffer::new(delay.current(), start.first_input_tick),
            clock: FixedStep::new(start.tick_rate, Policy::NETWORKED),
            delay,
            stats: GameStats::default(),
            last_stall: None,
            history: History::new(options.history),
            hash_interval: u32::from(start.hash_interval.max(1)),
            tick_rate: start.tick_rate,
            inject_desync_at: options.inject_desync_at,
            name: start
                .roster
                .iter()
                .find(|r| Some(r.id) == start.you)
                .map_or_else(|| "spectator".to_string(), |r| r.name.clone()),
            first_input_tick: start.first_input_tick,
            catch_up: (start.history > 0).then_some(Tick(start.history)),
        }
    }

    /// The neutral inputs this client sends for its first ticks (none for
    /// a spectator).
    pub fn initial_inputs(&self) -> Vec<(Tick, Input)> {
        match self.me {
            Some(_) => self.buffer.initial_inputs(),
            None => Vec::new(),
        }
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

    /// Runs the next tick if it is due and its bundle is here. While
    /// catching up, every received bundle is due at once: game time is
    /// replayed as fast as the machine allows, then the clock takes over.
    pub fn advance(&mut self) -> Advance {
        if let Some(to) = self.catch_up {
            if self.current.tick() >= to && self.buffer.buffered() == 0 {
                self.catch_up = None;
                self.clock = FixedStep::new(self.tick_rate, Policy::NETWORKED);
                return Advance::NotDue;
            }
        } else if !self.clock.due() {
            return Advance::NotDue;
        }
        match self.buffer.poll() {
            Gate::Step(tick, bundle) => {
                self.previous.clone_from(&self.current);
                apply(&mut self.current, &bundle);
                let now = self.current.tick();
                if self.inject_desync_at == Some(now) {
                    self.current.nudge();
                }
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
                Advance::Ran { tick: now, report }
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

    /// The ticks that need a local input after the last [`Advance::Ran`]
    /// (none for a spectator).
    pub fn local_ticks_due(&mut self) -> std::ops::Range<Tick> {
        match self.me {
            Some(_) => self.buffer.local_ticks_due(),
            None => Tick(0)..Tick(0),
        }
    }

    /// Feeds the adaptive input delay with the latest link figures and
    /// whether the server reports the game waiting for us; a changed delay
    /// applies from the next sample.
    pub fn adapt_delay(&mut self, rtt: Duration, jitter: Duration, late: bool) {
        if self.me.is_none() || self.catch_up.is_some() {
            return;
        }
        if let Some(delay) = self.delay.update(self.current.tick(), rtt, jitter, late) {
            self.buffer.set_input_delay(delay);
        }
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
        self.history.latest().map(|remembered| &remembered.bundle)
    }

    /// The dump for a desync the server announced, if the tick is still in
    /// the history.
    pub fn desync_dump(&self, notice: &DesyncNotice) -> Option<DesyncDump<G>> {
        self.history.dump(notice.tick, self.me, &self.name)
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
            balls: 0,
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
        while let Advance::Ran { tick, report } = game.advance() {
            ran.push(tick.0);
            reports.extend(report);
            game.local_ticks_due();
        }
        game.end_frame();
        (ran, reports)
    }

    #[test]
    fn a_tick_runs_only_when_it_is_due_and_its_bundle_is_here() {
        let mut game = NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), GameOptions::default());
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
        let mut game = NetGame::<Tally>::new(&start(Some(PlayerId(1)), 0), GameOptions::default());
        game.receive(Tick(0), (0..30).map(|_| bundle(1)).collect());
        let (ran, reports) = frame(&mut game, 30 * TICK_NS);
        assert_eq!(ran.len(), 30);
        let ticks: Vec<u32> = reports.iter().map(|(t, _)| t.0).collect();
        assert_eq!(ticks, vec![15, 30]);
        assert_eq!(reports[1].1, game.current.hash());
    }

    #[test]
    fn a_spectator_sends_no_inputs_reports_nothing_and_is_never_dropped() {
        let mut game = NetGame::<Tally>::new(&start(None, 0), GameOptions::default());
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
            NetGame::<Tally>::new(&start(Some(PlayerId(1)), 100), GameOptions::default());
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
    fn an_injected_fault_changes_the_state_at_its_tick_and_its_dump_holds_it() {
        let options = GameOptions {
            inject_desync_at: Some(Tick(5)),
            ..GameOptions::default()
        };
        let mut faulty = NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), options);
        let mut honest =
            NetGame::<Tally>::new(&start(Some(PlayerId(1)), 0), GameOptions::default());
        for game in [&mut faulty, &mut honest] {
            game.receive(Tick(0), (0..10).map(|_| bundle(3)).collect());
            frame(game, 10 * TICK_NS);
        }
        assert_ne!(faulty.current.hash(), honest.current.hash());
        let notice = DesyncNotice {
            tick: Tick(5),
            diverged: vec![PlayerId(0)],
            majority: None,
        };
        let (dump, clean) = (faulty.desync_dump(&notice), honest.desync_dump(&notice));
        let (Some(dump), Some(clean)) = (dump, clean) else {
            panic!("tick 5 is in both histories");
        };
        assert_eq!((dump.player, dump.tick), (Some(PlayerId(0)), Tick(5)));
        let diffs = crate::diff::diff_worlds(&clean.world, &dump.world);
        assert_eq!(diffs.len(), 1, "{diffs:?}");
        assert_eq!(diffs[0].path, "drift");
    }

    #[test]
    fn a_player_plays_until_its_departure_is_bundled() {
        let mut game = NetGame::<Tally>::new(&start(Some(PlayerId(1)), 0), GameOptions::default());
        let mut gone = bundle(0);
        gone.left = vec![PlayerId(1)];
        game.receive(Tick(0), vec![bundle(0), gone]);
        frame(&mut game, TICK_NS);
        assert!(game.is_playing());
        frame(&mut game, TICK_NS);
        assert!(!game.is_playing());
    }
}
