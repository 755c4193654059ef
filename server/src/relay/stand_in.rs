//! Standing in for late players (the laggard tolerance, see the rules in
//! the relay's module doc): a tick that lacks only some players' inputs,
//! the others having arrived the tolerance ago, is completed with each
//! missing player's previous input and marked in its bundle
//! ([`Substitution`]); [`Relay::next_stand_in`] tells the driver when to
//! wake for the next.

use std::time::Duration;

use lockstep_protocol::{Input, PlayerId, Tick};

use super::{input_of, Held, Relay, Substitution};

impl Relay {
    /// Stands in for late players (when the relay has a laggard
    /// tolerance): from the next tick on, while a tick lacks only some
    /// players' inputs and the last of the others arrived at least the
    /// tolerance before `now`, each missing input becomes that player's
    /// input of the tick before; but never before half a tick before the
    /// tick is needed (`Schedule::stand_in_from` in `slack.rs`): until then
    /// a player with a smaller delay than the others is late to nobody. The next
    /// [`Relay::complete`] bundles those ticks with the marks. Returns the
    /// stand-ins, in tick order.
    pub fn poll_laggards(&mut self, now: Duration) -> Vec<Substitution> {
        let mut substitutions = Vec::new();
        let mut tick = self.next_tick();
        while let Some((missing, last_arrival)) = self.missing_at(tick) {
            if !missing.is_empty()
                && self
                    .stand_in_at(tick, last_arrival)
                    .is_none_or(|at| now < at)
            {
                break;
            }
            let waited = now.saturating_sub(last_arrival);
            for player in missing {
                let input = self.input_before(player, tick);
                if let Some(slot) = self.slots.get_mut(&player) {
                    let stand_in = Held {
                        input,
                        arrived: now,
                        stand_in: true,
                    };
                    slot.inputs.insert(tick, stand_in);
                    // Its own input will be at least this late: its
                    // slack says so, and its delay goes up.
                    slot.slack.record(&self.schedule, tick, now);
                }
                substitutions.push(Substitution {
                    player,
                    tick,
                    waited,
                });
            }
            tick = tick.next();
        }
        substitutions
    }

    /// When [`Relay::poll_laggards`] will stand in for the missing inputs
    /// of the next tick, if any are missing and it will: the driver wakes
    /// then, not at its next periodic poll, so the stand-in leaves on time.
    pub fn next_stand_in(&self) -> Option<Duration> {
        let mut tick = self.next_tick();
        loop {
            let (missing, last_arrival) = self.missing_at(tick)?;
            if !missing.is_empty() {
                return self.stand_in_at(tick, last_arrival);
            }
            tick = tick.next();
        }
    }

    /// When the missing inputs of `tick`, whose last input arrived at
    /// `last_arrival`, may be stood in for: the tolerance after that, and
    /// not before [`crate::slack::Schedule::stand_in_from`]. `None` without a tolerance.
    fn stand_in_at(&self, tick: Tick, last_arrival: Duration) -> Option<Duration> {
        let tolerance = self.laggard_tolerance?;
        Some((last_arrival + tolerance).max(self.schedule.stand_in_from(tick)))
    }

    /// The players taking part in `tick` whose input for it is missing, and
    /// when the last input of the tick arrived. `None` when no input of
    /// the tick is in, or when a player whose departure is decided lacks
    /// one (the relay never stands in for a leaving player; its drop tick
    /// is its first missing input, so this does not happen).
    fn missing_at(&self, tick: Tick) -> Option<(Vec<PlayerId>, Duration)> {
        let mut missing = Vec::new();
        let mut last_arrival = None;
        for (&player, slot) in &self.slots {
            if !slot.plays(tick) {
                continue;
            }
            match slot.inputs.get(&tick) {
                Some(held) => last_arrival = last_arrival.max(Some(held.arrived)),
                None if slot.departure.is_some() => return None,
                None => missing.push(player),
            }
        }
        Some((missing, last_arrival?))
    }

    /// `player`'s input of the tick before `tick`, bundled or still held;
    /// the default input when it had none (tick 0, or it just came back).
    fn input_before(&self, player: PlayerId, tick: Tick) -> Input {
        let Some(previous) = tick.0.checked_sub(1).map(Tick) else {
            return Input::default();
        };
        let input = if previous < self.next_tick() {
            self.bundle(previous)
                .and_then(|bundle| input_of(bundle, player))
        } else {
            self.slots
                .get(&player)
                .and_then(|slot| slot.inputs.get(&previous))
                .map(|held| held.input)
        };
        input.unwrap_or_default()
    }
}
