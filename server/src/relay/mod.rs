//! The relay: collects one input per active player per tick and turns each
//! complete set into a [`Bundle`].
//!
//! Pure state machine in the quinn-proto style: no sockets and no clock. The
//! driver passes `now` in and carries out what the relay returns, so every
//! rule here is unit-tested with explicit time.
//!
//! # Rules
//! - Tick `t` is bundled once every player taking part in `t` has sent its
//!   input for `t`. Bundles are produced strictly in tick order, once each.
//! - Inputs are stamped with the connection's player by the driver; for a
//!   given (player, tick) the first input wins and repeats are counted.
//! - A player is removed at its *drop tick*: the first tick for which the
//!   relay holds no input from it. Every tick before that is bundled with its
//!   inputs, and the bundle for the drop tick lists it in [`Bundle::left`], so
//!   every client removes it at the same tick.
//! - A player that comes back ([`Relay::rejoin`]) takes part again from a
//!   tick chosen ahead of the game (time to catch up), announced in
//!   [`Bundle::joined`] of that tick.
//! - Laggard tolerance: when the inputs of tick `t` are all in but some
//!   players', and the last of them arrived at least the tolerance ago,
//!   [`Relay::poll_laggards`] completes the tick with each missing
//!   player's input of the previous bundle (the default input if it had
//!   none) and the bundle lists them in [`Bundle::substituted`]; never
//!   before half a tick before the tick is needed
//!   ([`Schedule::stand_in_from`]), and [`Relay::next_stand_in`] tells the
//!   driver when to wake for it (`stand_in.rs`). It never stands in for a
//!   player whose departure is decided, nor when nobody's input for `t` is
//!   in. The real input arriving afterwards is a repeat.
//! - Every bundle since the latest verified snapshot is kept (every bundle
//!   of the game when there is none): clients that join late or rejoin
//!   fast-forward through them, from that snapshot
//!   ([`Relay::forget_before`]). At 60 Hz four players cost about 1 MB per
//!   quarter hour of kept bundles.

use std::collections::BTreeMap;
use std::time::Duration;

use lockstep_protocol::{
    encode_bundles, Bundle, Input, InputDatagram, PlayerId, PlayerInput, Slack, Tick,
};

use crate::slack::{Schedule, SlackWindow};

mod stand_in;

/// How far ahead of the next incomplete tick an input may be. Clients only
/// run `input_delay` ticks ahead of the last bundle they hold, so an honest
/// client stays far inside this; it bounds the memory a client can claim.
pub const INPUT_WINDOW: u32 = 256;

/// Most bundles a client may leave unacknowledged. Beyond it the client is
/// dropped: it would need more than a minute of repeats.
pub const MAX_UNACKED_BUNDLES: u32 = 4096;

/// Why a player leaves the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// It said Leave.
    Left,
    /// Its connection closed or failed.
    Disconnected,
    /// Nothing heard from it for longer than the drop timeout.
    Timeout,
    /// It fell too far behind acknowledging bundles.
    TooFarBehind,
    /// It connected again; the old connection's slot ends here.
    Reconnected,
    /// It played what it wanted of this game and waits in the lobby for
    /// the next ([`lockstep_protocol::ClientMessage::GameDone`]).
    Finished,
    /// It did not come back in time after the server restarted
    /// (`--resume`).
    NotBack,
}

impl DropReason {
    /// Short name for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Left => "left",
            DropReason::Disconnected => "disconnected",
            DropReason::Timeout => "timeout",
            DropReason::TooFarBehind => "too-far-behind",
            DropReason::Reconnected => "reconnected",
            DropReason::Finished => "finished",
            DropReason::NotBack => "not-back-after-restart",
        }
    }
}

/// A removal the relay decided on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Departure {
    /// Who.
    pub player: PlayerId,
    /// First tick simulated without it.
    pub tick: Tick,
    /// Why.
    pub reason: DropReason,
}

/// An input the relay put in for a late player ([`Relay::poll_laggards`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Substitution {
    /// Whose input was missing.
    pub player: PlayerId,
    /// The tick completed without it.
    pub tick: Tick,
    /// How long the tick had waited for it: since the last of the other
    /// inputs of the tick arrived.
    pub waited: Duration,
}

/// What happened to the inputs of one datagram.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct InputOutcome {
    /// Inputs stored for a later bundle.
    pub accepted: u32,
    /// Inputs for a (player, tick) already held or already bundled. Honest
    /// clients repeat every unacknowledged input in each datagram, so most
    /// of these are expected. A late input whose tick was bundled with a
    /// stand-in ([`Substitution`]) counts here too.
    pub repeated: u32,
    /// Repeats that differ from the input the relay kept: a client trying
    /// to change its input after the fact (the first one wins). A late
    /// input that differs from its stand-in is not one: the client never
    /// sent the stand-in.
    pub conflicting: u32,
    /// Inputs beyond [`INPUT_WINDOW`], before the player's first tick or
    /// after its drop tick.
    pub out_of_window: u32,
}

impl InputOutcome {
    fn add(&mut self, other: InputOutcome) {
        self.accepted += other.accepted;
        self.repeated += other.repeated;
        self.conflicting += other.conflicting;
        self.out_of_window += other.out_of_window;
    }
}

/// One player's standing, for the lag indicator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    /// Who.
    pub player: PlayerId,
    /// How many ticks its inputs trail the player furthest ahead.
    pub ticks_behind: u32,
    /// Time since anything arrived from it.
    pub silent: Duration,
    /// Whether the next tick waits for its input.
    pub waited_for: bool,
    /// How early its recent inputs arrived.
    pub slack: Option<Slack>,
}

/// An input waiting for its tick's bundle.
#[derive(Debug, Clone, Copy)]
struct Held {
    input: Input,
    /// When it arrived: the laggard tolerance runs from the last arrival
    /// among a tick's inputs.
    arrived: Duration,
    /// Put in by [`Relay::poll_laggards`], not sent by the player: the
    /// bundle marks it.
    stand_in: bool,
}

#[derive(Debug)]
struct Slot {
    /// First tick this player takes part in (0, or its rejoin tick).
    first_tick: Tick,
    /// Inputs for ticks at or after `Relay::next_tick`.
    inputs: BTreeMap<Tick, Held>,
    /// First bundle tick this client does not hold.
    bundles_ack: Tick,
    /// Last time anything arrived from it.
    last_heard: Duration,
    /// Set once the relay decided to remove it.
    departure: Option<Departure>,
    /// Every input this player sent, by outcome.
    totals: InputOutcome,
    /// How early its last inputs arrived.
    slack: SlackWindow,
}

impl Slot {
    fn new(first_tick: Tick, bundles_ack: Tick, now: Duration) -> Slot {
        Slot {
            first_tick,
            inputs: BTreeMap::new(),
            bundles_ack,
            last_heard: now,
            departure: None,
            totals: InputOutcome::default(),
            slack: SlackWindow::default(),
        }
    }

    /// First tick at or after `from` (and its first tick) with no input.
    fn first_missing(&self, from: Tick) -> Tick {
        let mut tick = from.max(self.first_tick);
        while self.inputs.contains_key(&tick) {
            tick = tick.next();
        }
        tick
    }

    /// Whether the player takes part in `tick`.
    fn plays(&self, tick: Tick) -> bool {
        self.first_tick <= tick && self.departure.is_none_or(|d| d.tick > tick)
    }
}

/// The relay of one running game.
#[derive(Debug)]
pub struct Relay {
    slots: BTreeMap<PlayerId, Slot>,
    /// The game's bundles from `first_kept` on; index = tick - `first_kept`.
    /// `first_kept` plus its length is the first tick without a complete
    /// bundle. The older ones are dropped once a verified snapshot covers
    /// them ([`Relay::forget_before`]): the replay on disk keeps them all.
    bundles: Vec<Bundle>,
    /// The tick of `bundles[0]`.
    first_kept: Tick,
    drop_timeout: Duration,
    /// When each tick's inputs are needed.
    schedule: Schedule,
    /// How long a tick waits for its missing inputs once every other one
    /// is in, before [`Relay::poll_laggards`] stands in for them; `None`
    /// waits for ever (until the drop timeout).
    laggard_tolerance: Option<Duration>,
    /// Slots removed so far: lets the driver skip its bookkeeping when
    /// nobody left since it last looked.
    departures: u64,
}

impl Relay {
    /// A relay for `players`, starting at tick 0 at time `now`, at
    /// `tick_rate` ticks a second, that stands in for inputs missing
    /// `laggard_tolerance` after the others of their tick (never when
    /// `None`).
    pub fn new(
        players: &[PlayerId],
        drop_timeout: Duration,
        laggard_tolerance: Option<Duration>,
        now: Duration,
        tick_rate: u16,
    ) -> Self {
        let slots = players
            .iter()
            .map(|&id| (id, Slot::new(Tick(0), Tick(0), now)))
            .collect();
        Relay {
            slots,
            bundles: Vec::new(),
            first_kept: Tick(0),
            drop_timeout,
            schedule: Schedule::new(now, tick_rate),
            laggard_tolerance,
            departures: 0,
        }
    }

    /// The relay of a game recorded up to `bundles` (ticks `0..len`) and
    /// going on after a restart at time `now`: `players` take part from
    /// their first tick (0, or the tick their rejoin was bundled at), and
    /// hold every bundle so far. Nothing is timed until
    /// [`Relay::restart_clock`].
    pub fn resumed(
        players: &[(PlayerId, Tick)],
        bundles: Vec<Bundle>,
        drop_timeout: Duration,
        laggard_tolerance: Option<Duration>,
        now: Duration,
        tick_rate: u16,
    ) -> Self {
        let next = Tick(bundles.len() as u32);
        let slots = players
            .iter()
            .map(|&(id, first)| (id, Slot::new(first, next, now)))
            .collect();
        Relay {
            slots,
            bundles,
            first_kept: Tick(0),
            drop_timeout,
            schedule: Schedule::new(now, tick_rate).starting_at(next, now),
            laggard_tolerance,
            departures: 0,
        }
    }

    /// The game runs again from `now`, after a restart: the clients' clocks
    /// start as the bundle of `from - 1` reaches them, so tick `from` is
    /// needed a tick from now. Every slot counts its silence from now.
    pub fn restart_clock(&mut self, from: Tick, now: Duration) {
        self.schedule = self.schedule.clone().starting_at(from, now);
        for slot in self.slots.values_mut() {
            slot.last_heard = slot.last_heard.max(now);
        }
    }

    /// The game's pace changes as the clients will change it: from tick
    /// `from` on, ticks last `tick` and are due `postpone` later. Inputs
    /// are timed, and stood in for, against that schedule.
    pub fn change_pace(&mut self, from: Tick, tick: Duration, postpone: Duration) {
        self.schedule.change(from, tick, postpone);
    }

    /// First tick without a complete bundle.
    pub fn next_tick(&self) -> Tick {
        self.first_kept.plus(self.bundles.len() as u32)
    }

    /// Players still taking part (including those whose drop tick is
    /// decided but not yet reached, and those about to rejoin).
    pub fn players(&self) -> impl Iterator<Item = PlayerId> + '_ {
        self.slots.keys().copied()
    }

    /// Whether `player` holds a slot that is not being dropped.
    pub fn is_active(&self, player: PlayerId) -> bool {
        self.slots
            .get(&player)
            .is_some_and(|slot| slot.departure.is_none())
    }

    /// Players that take part in `tick`: not dropped at or before it, and
    /// not rejoining after it.
    pub fn players_at(&self, tick: Tick) -> Vec<PlayerId> {
        self.slots
            .iter()
            .filter(|(_, slot)| slot.plays(tick))
            .map(|(&id, _)| id)
            .collect()
    }

    /// Time since anything arrived from `player`, if it holds an active
    /// slot.
    pub fn silence(&self, player: PlayerId, now: Duration) -> Option<Duration> {
        let slot = self
            .slots
            .get(&player)
            .filter(|slot| slot.departure.is_none())?;
        Some(now.saturating_sub(slot.last_heard))
    }

    /// How many slots have been removed since the game began.
    pub fn departures(&self) -> u64 {
        self.departures
    }

    /// Whether no player is left: the game is over.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Takes a datagram of inputs from `player` (stamped by the driver).
    /// Unknown players are ignored.
    pub fn receive(
        &mut self,
        player: PlayerId,
        datagram: &InputDatagram,
        now: Duration,
    ) -> InputOutcome {
        let mut outcome = InputOutcome::default();
        let next_tick = self.next_tick();
        let Some(slot) = self.slots.get_mut(&player) else {
            return outcome;
        };
        slot.last_heard = now;
        if datagram.bundles_ack > slot.bundles_ack {
            slot.bundles_ack = datagram.bundles_ack.min(next_tick);
        }
        let limit = match slot.departure {
            Some(departure) => departure.tick,
            None => next_tick.max(slot.first_tick).plus(INPUT_WINDOW),
        };
        let mut tick = datagram.first_tick;
        for &input in &datagram.inputs {
            // For a tick already decided: the player's input there (`None`
            // if it had none), and whether that was a stand-in.
            let kept = if tick < next_tick {
                tick.0
                    .checked_sub(self.first_kept.0)
                    .and_then(|index| self.bundles.get(index as usize))
                    .map(|bundle| {
                        (
                            input_of(bundle, player),
                            bundle.substituted.contains(&player),
                        )
                    })
            } else {
                slot.inputs
                    .get(&tick)
                    .map(|held| (Some(held.input), held.stand_in))
            };
            if let Some((kept, stand_in)) = kept {
                outcome.repeated += 1;
                if kept != Some(input) && !stand_in {
                    outcome.conflicting += 1;
                }
            } else if tick >= limit || tick < slot.first_tick {
                outcome.out_of_window += 1;
            } else {
                slot.inputs.insert(
                    tick,
                    Held {
                        input,
                        arrived: now,
                        stand_in: false,
                    },
                );
                slot.slack.record(&self.schedule, tick, now);
                outcome.accepted += 1;
            }
            tick = tick.next();
        }
        slot.totals.add(outcome);
        outcome
    }

    /// Every input `player` sent so far, by outcome (`None` once its slot is
    /// gone).
    pub fn input_totals(&self, player: PlayerId) -> Option<InputOutcome> {
        self.slots.get(&player).map(|slot| slot.totals)
    }

    /// Schedules `player`'s removal at its drop tick. Returns the decision,
    /// or `None` if the player is unknown or already leaving.
    pub fn remove(&mut self, player: PlayerId, reason: DropReason) -> Option<Departure> {
        let next_tick = self.next_tick();
        let slot = self.slots.get_mut(&player)?;
        if slot.departure.is_some() {
            return None;
        }
        let departure = Departure {
            player,
            tick: slot.first_missing(next_tick),
            reason,
        };
        slot.inputs.retain(|&t, _| t < departure.tick);
        slot.departure = Some(departure);
        Some(departure)
    }

    /// Brings `player` back into the game `lead` ticks from now (it needs
    /// that long to fast-forward through the history). Returns its first
    /// tick, or `None` if it still holds an active slot. A slot being
    /// dropped is replaced once its drop tick is bundled, so call this only
    /// for players no longer in [`Relay::players`].
    pub fn rejoin(&mut self, player: PlayerId, lead: u32, now: Duration) -> Option<Tick> {
        if self.slots.contains_key(&player) {
            return None;
        }
        let first = self.next_tick().plus(lead.max(1));
        self.slots
            .insert(player, Slot::new(first, self.next_tick(), now));
        Some(first)
    }

    /// Removes every player silent for longer than the drop timeout or too
    /// far behind acknowledging bundles.
    pub fn poll_timeouts(&mut self, now: Duration) -> Vec<Departure> {
        let next_tick = self.next_tick();
        let overdue: Vec<(PlayerId, DropReason)> = self
            .slots
            .iter()
            .filter(|(_, slot)| slot.departure.is_none())
            .filter_map(|(&id, slot)| {
                if now.saturating_sub(slot.last_heard) > self.drop_timeout {
                    Some((id, DropReason::Timeout))
                } else if next_tick.since(slot.bundles_ack) > MAX_UNACKED_BUNDLES {
                    Some((id, DropReason::TooFarBehind))
                } else {
                    None
                }
            })
            .collect();
        overdue
            .into_iter()
            .filter_map(|(id, reason)| self.remove(id, reason))
            .collect()
    }

    /// Bundles every tick whose inputs are complete; returns how many.
    pub fn complete(&mut self) -> u32 {
        let mut made = 0;
        while let Some(bundle) = self.try_bundle() {
            self.bundles.push(bundle);
            made += 1;
        }
        made
    }

    fn try_bundle(&mut self) -> Option<Bundle> {
        let tick = self.next_tick();
        if self.slots.is_empty() {
            return None;
        }
        let ready = self
            .slots
            .values()
            .all(|slot| !slot.plays(tick) || slot.inputs.contains_key(&tick));
        if !ready {
            return None;
        }
        let mut bundle = Bundle::default();
        for (&player, slot) in &mut self.slots {
            if slot.departure.is_some_and(|d| d.tick <= tick) {
                bundle.left.push(player);
                continue;
            }
            if slot.first_tick == tick && tick > Tick(0) {
                bundle.joined.push(player);
            }
            if let Some(held) = slot.inputs.remove(&tick) {
                bundle.inputs.push(PlayerInput {
                    player,
                    input: held.input,
                });
                if held.stand_in {
                    bundle.substituted.push(player);
                }
            }
        }
        if !bundle.left.is_empty() {
            self.slots
                .retain(|_, slot| slot.departure.is_none_or(|d| d.tick > tick));
            self.departures += bundle.left.len() as u64;
        }
        Some(bundle)
    }

    /// The bundle of `tick`, if it is complete and still kept.
    fn bundle(&self, tick: Tick) -> Option<&Bundle> {
        let index = tick.0.checked_sub(self.first_kept.0)?;
        self.bundles.get(index as usize)
    }

    /// The first tick whose bundle is still kept.
    pub fn first_kept(&self) -> Tick {
        self.first_kept
    }

    /// Drops the bundles before `tick` (at most up to the last complete
    /// one): a verified snapshot of `tick` replaces them for anyone who
    /// joins, so the relay's memory follows the snapshot interval, not
    /// the game's length. Returns how many were dropped.
    pub fn forget_before(&mut self, tick: Tick) -> u32 {
        let tick = tick.min(self.next_tick());
        let drop = tick.0.saturating_sub(self.first_kept.0);
        self.bundles.drain(..drop as usize);
        self.first_kept = self.first_kept.max(tick);
        drop
    }

    /// The kept bundles of ticks `from..to` (clamped to what is kept),
    /// with the tick of the first: `from` is raised to
    /// [`Relay::first_kept`] when it is older.
    pub fn history(&self, from: Tick, to: Tick) -> (Tick, &[Bundle]) {
        let from = from.max(self.first_kept);
        let to = to.min(self.next_tick()).max(from);
        let start = from.since(self.first_kept) as usize;
        (
            from,
            &self.bundles[start..to.since(self.first_kept) as usize],
        )
    }

    /// The kept bundles from `from` on, with their ticks.
    pub fn bundles_from(&self, from: Tick) -> impl Iterator<Item = (Tick, &Bundle)> + '_ {
        let (from, bundles) = self.history(from, self.next_tick());
        bundles
            .iter()
            .enumerate()
            .map(move |(i, bundle)| (from.plus(i as u32), bundle))
    }

    /// The encoded datagram `player` should receive now (the session gets
    /// it through [`Relay::datagram_start`] and [`Relay::datagram_from`], to
    /// share it between players at the same place).
    #[cfg(test)]
    pub fn datagram_for(&self, player: PlayerId, max_size: usize) -> Option<Vec<u8>> {
        let (from, inputs_ack) = self.datagram_start(player)?;
        self.datagram_from(from, inputs_ack, max_size)
            .map(|(bytes, _)| bytes)
    }

    /// Where `player`'s next bundle datagram starts: its first
    /// unacknowledged bundle and its input ack. `None` for an unknown
    /// player. Players with the same start get the same datagram.
    pub fn datagram_start(&self, player: PlayerId) -> Option<(Tick, Tick)> {
        let slot = self.slots.get(&player)?;
        Some((slot.bundles_ack, slot.first_missing(self.next_tick())))
    }

    /// The encoded bundle datagram from bundle `from` on, carrying
    /// `inputs_ack`: as many bundles as fit in `max_size` bytes, oldest
    /// first (the client needs them in order), and the tick after the
    /// last one it holds. Players start where [`Relay::datagram_start`]
    /// says; a spectator, which sends no inputs, at its own ack.
    pub fn datagram_from(
        &self,
        from: Tick,
        inputs_ack: Tick,
        max_size: usize,
    ) -> Option<(Vec<u8>, Tick)> {
        let (from, mut bundles) = self.history(from, self.next_tick());
        loop {
            match encode_bundles(inputs_ack, from, bundles, max_size) {
                Ok(bytes) => return Some((bytes, from.plus(bundles.len() as u32))),
                Err(_) if !bundles.is_empty() => bundles = &bundles[..bundles.len() / 2],
                Err(_) => return None,
            }
        }
    }

    /// Whether `player` holds every bundle produced so far.
    pub fn is_up_to_date(&self, player: PlayerId) -> bool {
        self.slots
            .get(&player)
            .is_some_and(|slot| slot.bundles_ack >= self.next_tick())
    }

    /// Every player's standing at `now`, for the lag indicator. A player is
    /// waited for when the next tick lacks its input while someone else's
    /// inputs are already further ahead.
    pub fn standings(&self, now: Duration) -> Vec<Standing> {
        let next_tick = self.next_tick();
        let reach: Vec<(PlayerId, Tick)> = self
            .slots
            .iter()
            .filter(|(_, slot)| slot.plays(next_tick))
            .map(|(&id, slot)| (id, slot.first_missing(next_tick)))
            .collect();
        let lead = reach.iter().map(|&(_, t)| t).max().unwrap_or(next_tick);
        self.slots
            .iter()
            .map(|(&player, slot)| {
                let first_missing = reach
                    .iter()
                    .find(|&&(id, _)| id == player)
                    .map_or(lead, |&(_, t)| t);
                let ticks_behind = lead.since(first_missing);
                Standing {
                    player,
                    ticks_behind,
                    silent: now.saturating_sub(slot.last_heard),
                    waited_for: first_missing == next_tick && ticks_behind > 0,
                    slack: slot.slack.report(),
                }
            })
            .collect()
    }
}

/// `player`'s input in `bundle`, if it had one.
fn input_of(bundle: &Bundle, player: PlayerId) -> Option<Input> {
    bundle
        .inputs
        .iter()
        .find(|i| i.player == player)
        .map(|i| i.input)
}

#[cfg(test)]
mod tests;
