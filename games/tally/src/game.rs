//! The whole game. Integers, one float and a roster that can change:
//! enough for the gate, the accumulator, the sync test, the history and
//! the desync diff to have something to check.
//!
//! Determinism: the float math is one multiply and one add per value,
//! each correctly rounded on every machine; the counters are kept
//! ascending by player; nothing reads a clock; the bots' generator is
//! their own state.

use lockstep_engine::determinism::fnv::Fnv1a;
use lockstep_engine::trace;
use lockstep_engine::{Game, HasBots, Setup};
use lockstep_protocol::{Buttons, Input, PlayerId, PlayerInput, Tick};
use serde::{Deserialize, Serialize};

/// One player's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counter {
    /// Whose counter.
    pub player: PlayerId,
    /// Sum of the button bits held so far.
    pub count: u32,
    /// Halves every tick, plus the buttons held.
    pub speed: f32,
}

/// The whole state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    tick: Tick,
    roster: Vec<PlayerId>,
    counters: Vec<Counter>,
    drift: f32,
}

impl Game for Tally {
    const NAME: &'static str = "tally";
    type Settings = ();
    const PHASES: &'static [&'static str] = &["counters", "drift"];

    fn start(setup: &Setup<()>) -> Tally {
        let mut roster = setup.players.clone();
        roster.sort_unstable();
        roster.dedup();
        let counters = roster.iter().map(|&player| counter(player)).collect();
        Tally {
            tick: Tick(0),
            roster,
            counters,
            drift: (setup.seed % 1000) as f32,
        }
    }

    fn step(&mut self, inputs: &[PlayerInput]) {
        self.advance(inputs, |_, _| {});
    }

    /// Two phases: the counters follow the inputs, then the drift and the
    /// tick move on.
    fn step_phases(
        &mut self,
        inputs: &[PlayerInput],
        after: &mut dyn FnMut(&'static str, &mut Tally),
    ) {
        self.advance(inputs, after);
    }

    fn tick(&self) -> Tick {
        self.tick
    }

    fn hash(&self) -> u64 {
        let mut h = Fnv1a::new();
        h.write_u32(self.tick.0);
        for c in &self.counters {
            h.write_u8(c.player.0);
            h.write_u32(c.count);
            h.write_f32(c.speed);
        }
        h.write_f32(self.drift);
        h.finish()
    }

    fn remove_player(&mut self, player: PlayerId) {
        self.counters.retain(|c| c.player != player);
    }

    fn add_player(&mut self, player: PlayerId) {
        let known = self.roster.contains(&player);
        if let (true, Err(at)) = (
            known,
            self.counters.binary_search_by_key(&player, |c| c.player),
        ) {
            self.counters.insert(at, counter(player));
        }
    }

    fn has_player(&self, player: PlayerId) -> bool {
        self.counters.iter().any(|c| c.player == player)
    }

    fn nudge(&mut self) -> Option<&'static str> {
        self.drift = f32::from_bits(self.drift.to_bits() + 1);
        Some("drift")
    }
}

impl Tally {
    /// The step, calling `after` after each phase: generic, so that
    /// [`Game::step`] gets it with a closure that does nothing, inlined,
    /// where a call through `&mut dyn FnMut` per phase cost a tenth of
    /// this tiny step.
    #[inline(always)]
    fn advance(&mut self, inputs: &[PlayerInput], mut after: impl FnMut(&'static str, &mut Tally)) {
        for c in &mut self.counters {
            let held = inputs
                .iter()
                .find(|i| i.player == c.player)
                .map_or(0, |i| i.input.buttons.0);
            c.count = c.count.wrapping_add(u32::from(held));
            c.speed = c.speed * 0.5 + f32::from(held);
        }
        if trace::enabled() {
            self.trace_counters();
        }
        after("counters", self);
        self.drift = trace::trace("drift", self.drift * 0.75 + 1.0);
        self.tick = self.tick.next();
        after("drift", self);
    }

    /// The counters for the sync trace after their phase: only while
    /// something records, out of the step's way.
    #[cold]
    #[inline(never)]
    fn trace_counters(&self) {
        for (i, c) in self.counters.iter().enumerate() {
            trace::trace_item("counter.count", i, c.count);
            trace::trace_item("counter.speed", i, c.speed);
        }
    }
}

/// A Tally bot: a seeded xorshift generator that picks which buttons to
/// hold each tick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TallyBot {
    state: u64,
}

impl HasBots for Tally {
    const ABOUT: &'static str = "counters";
    type Bot = TallyBot;

    fn bot(seed: u64, player: PlayerId) -> TallyBot {
        // Never zero, which xorshift would keep for ever.
        let state = (seed ^ (u64::from(player.0) << 56)) | 1;
        TallyBot { state }
    }

    fn bot_input(&self, bot: &mut TallyBot, me: PlayerId) -> Input {
        if !self.has_player(me) {
            return Input::default();
        }
        bot.state ^= bot.state << 13;
        bot.state ^= bot.state >> 7;
        bot.state ^= bot.state << 17;
        Input {
            buttons: Buttons((bot.state >> 40) as u8 & 0x1f),
            axes: None,
        }
    }
}

impl Tally {
    /// Every player's counter, ascending by player.
    pub fn counters(&self) -> &[Counter] {
        &self.counters
    }

    /// The shared float.
    pub fn drift(&self) -> f32 {
        self.drift
    }
}

fn counter(player: PlayerId) -> Counter {
    Counter {
        player,
        count: 0,
        speed: 0.0,
    }
}
