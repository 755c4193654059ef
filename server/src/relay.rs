//! The relay: collects one input per active player per tick and turns each
//! complete set into a [`Bundle`].
//!
//! Pure state machine in the quinn-proto style: no sockets and no clock. The
//! driver passes `now` in and carries out what the relay returns, so every
//! rule here is unit-tested with explicit time.
//!
//! # Rules
//! - Tick `t` is bundled once every player still active at `t` has sent its
//!   input for `t`. Bundles are produced strictly in tick order, once each.
//! - Inputs are stamped with the connection's player by the driver; for a
//!   given (player, tick) the first input wins and repeats are counted.
//! - A player is removed at its *drop tick*: the first tick for which the
//!   relay holds no input from it. Every tick before that is bundled with its
//!   inputs, and the bundle for the drop tick lists it in [`Bundle::left`], so
//!   every client removes it at the same tick.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use lockstep_protocol::{
    encode, Bundle, BundleDatagram, InputDatagram, PlayerId, PlayerInput, ServerDatagram, Tick,
};

/// How far ahead of the next incomplete tick an input may be. Clients only
/// run `input_delay` ticks ahead of the last bundle they hold, so an honest
/// client stays far inside this; it bounds the memory a client can claim.
pub const INPUT_WINDOW: u32 = 256;

/// Most bundles kept for a client that has not acknowledged them. Beyond it
/// the client is dropped: it would need more than a minute of repeats.
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
}

impl DropReason {
    /// Short name for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Left => "left",
            DropReason::Disconnected => "disconnected",
            DropReason::Timeout => "timeout",
            DropReason::TooFarBehind => "too-far-behind",
        }
    }
}

/// A removal the relay decided on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drop {
    /// Who.
    pub player: PlayerId,
    /// First tick simulated without it.
    pub tick: Tick,
    /// Why.
    pub reason: DropReason,
}

/// What happened to the inputs of one datagram.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct InputOutcome {
    /// Inputs stored for a later bundle.
    pub accepted: u32,
    /// Inputs for a (player, tick) already held or already bundled.
    pub repeated: u32,
    /// Inputs beyond [`INPUT_WINDOW`] or after the player's drop tick.
    pub out_of_window: u32,
}

#[derive(Debug)]
struct Slot {
    /// Inputs for ticks at or after `Relay::next_tick`.
    inputs: BTreeMap<Tick, lockstep_protocol::Input>,
    /// First bundle tick this client does not hold.
    bundles_ack: Tick,
    /// Last time anything arrived from it.
    last_heard: Duration,
    /// Set once the relay decided to remove it.
    drop: Option<Drop>,
}

impl Slot {
    /// First tick at or after `from` with no input.
    fn first_missing(&self, from: Tick) -> Tick {
        let mut tick = from;
        while self.inputs.contains_key(&tick) {
            tick = tick.next();
        }
        tick
    }
}

/// The relay of one running game.
#[derive(Debug)]
pub struct Relay {
    next_tick: Tick,
    slots: BTreeMap<PlayerId, Slot>,
    /// Bundles from `history_start` up to `next_tick`, kept until every
    /// active client acknowledged them.
    history: VecDeque<Bundle>,
    history_start: Tick,
    drop_timeout: Duration,
}

impl Relay {
    /// A relay for `players`, starting at tick 0 at time `now`.
    pub fn new(players: &[PlayerId], drop_timeout: Duration, now: Duration) -> Self {
        let slots = players
            .iter()
            .map(|&id| {
                let slot = Slot {
                    inputs: BTreeMap::new(),
                    bundles_ack: Tick(0),
                    last_heard: now,
                    drop: None,
                };
                (id, slot)
            })
            .collect();
        Relay {
            next_tick: Tick(0),
            slots,
            history: VecDeque::new(),
            history_start: Tick(0),
            drop_timeout,
        }
    }

    /// First tick without a complete bundle.
    pub fn next_tick(&self) -> Tick {
        self.next_tick
    }

    /// Players still taking part (including those whose drop tick is
    /// decided but not yet reached).
    pub fn players(&self) -> impl Iterator<Item = PlayerId> + '_ {
        self.slots.keys().copied()
    }

    /// Players that take part in `tick`: active, and not dropped at or
    /// before it.
    pub fn players_at(&self, tick: Tick) -> Vec<PlayerId> {
        self.slots
            .iter()
            .filter(|(_, slot)| slot.drop.is_none_or(|d| d.tick > tick))
            .map(|(&id, _)| id)
            .collect()
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
        let next_tick = self.next_tick;
        let Some(slot) = self.slots.get_mut(&player) else {
            return outcome;
        };
        slot.last_heard = now;
        let acked_more = datagram.bundles_ack > slot.bundles_ack;
        if acked_more {
            slot.bundles_ack = datagram.bundles_ack.min(next_tick);
        }
        let limit = match slot.drop {
            Some(drop) => drop.tick,
            None => next_tick.plus(INPUT_WINDOW),
        };
        let mut tick = datagram.first_tick;
        for &input in &datagram.inputs {
            if tick < next_tick || slot.inputs.contains_key(&tick) {
                outcome.repeated += 1;
            } else if tick >= limit {
                outcome.out_of_window += 1;
            } else {
                slot.inputs.insert(tick, input);
                outcome.accepted += 1;
            }
            tick = tick.next();
        }
        if acked_more {
            self.trim_history();
        }
        outcome
    }

    /// Schedules `player`'s removal at its drop tick. Returns the decision,
    /// or `None` if the player is unknown or already leaving.
    pub fn remove(&mut self, player: PlayerId, reason: DropReason) -> Option<Drop> {
        let next_tick = self.next_tick;
        let slot = self.slots.get_mut(&player)?;
        if slot.drop.is_some() {
            return None;
        }
        let drop = Drop {
            player,
            tick: slot.first_missing(next_tick),
            reason,
        };
        slot.inputs.retain(|&t, _| t < drop.tick);
        slot.drop = Some(drop);
        Some(drop)
    }

    /// Removes every player silent for longer than the drop timeout or too
    /// far behind acknowledging bundles.
    pub fn poll_timeouts(&mut self, now: Duration) -> Vec<Drop> {
        let overdue: Vec<(PlayerId, DropReason)> = self
            .slots
            .iter()
            .filter(|(_, slot)| slot.drop.is_none())
            .filter_map(|(&id, slot)| {
                if now.saturating_sub(slot.last_heard) > self.drop_timeout {
                    Some((id, DropReason::Timeout))
                } else if self.next_tick.since(slot.bundles_ack) > MAX_UNACKED_BUNDLES {
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
            self.history.push_back(bundle);
            self.next_tick = self.next_tick.next();
            made += 1;
        }
        if made > 0 {
            self.trim_history();
        }
        made
    }

    fn try_bundle(&mut self) -> Option<Bundle> {
        let tick = self.next_tick;
        if self.slots.is_empty() {
            return None;
        }
        let ready = self.slots.values().all(|slot| {
            slot.drop.is_some_and(|d| d.tick <= tick) || slot.inputs.contains_key(&tick)
        });
        if !ready {
            return None;
        }
        let mut bundle = Bundle::default();
        for (&player, slot) in &mut self.slots {
            match slot.drop {
                Some(drop) if drop.tick <= tick => bundle.left.push(player),
                _ => {
                    if let Some(input) = slot.inputs.remove(&tick) {
                        bundle.inputs.push(PlayerInput { player, input });
                    }
                }
            }
        }
        self.slots
            .retain(|_, slot| slot.drop.is_none_or(|d| d.tick > tick));
        Some(bundle)
    }

    fn trim_history(&mut self) {
        let oldest_needed = self
            .slots
            .values()
            .map(|slot| slot.bundles_ack)
            .min()
            .unwrap_or(self.next_tick);
        while self.history_start < oldest_needed && !self.history.is_empty() {
            self.history.pop_front();
            self.history_start = self.history_start.next();
        }
    }

    /// The encoded datagram `player` should receive now: its input ack and
    /// the bundles it has not acknowledged, as many as fit in `max_size`
    /// bytes (oldest first: the client needs them in order). `None` for an
    /// unknown player.
    pub fn datagram_for(&self, player: PlayerId, max_size: usize) -> Option<Vec<u8>> {
        let slot = self.slots.get(&player)?;
        let first = slot.bundles_ack.max(self.history_start);
        let skip = first.since(self.history_start) as usize;
        let pending: Vec<Bundle> = self.history.iter().skip(skip).cloned().collect();
        let mut datagram = BundleDatagram {
            inputs_ack: slot.first_missing(self.next_tick),
            first_tick: first,
            bundles: pending,
        };
        loop {
            match encode(&ServerDatagram::Bundles(datagram.clone()), max_size) {
                Ok(bytes) => return Some(bytes),
                Err(_) if !datagram.bundles.is_empty() => {
                    let keep = datagram.bundles.len() / 2;
                    datagram.bundles.truncate(keep);
                }
                Err(_) => return None,
            }
        }
    }

    /// The kept bundles from `from` on, with their ticks. Bundles stay
    /// until every client acknowledged them, so the ones just completed
    /// are always here.
    pub fn bundles_from(&self, from: Tick) -> impl Iterator<Item = (Tick, &Bundle)> + '_ {
        let skip = from.since(self.history_start) as usize;
        self.history
            .iter()
            .enumerate()
            .skip(skip)
            .map(|(i, bundle)| (self.history_start.plus(i as u32), bundle))
    }

    /// Whether `player` holds every bundle produced so far.
    pub fn is_up_to_date(&self, player: PlayerId) -> bool {
        self.slots
            .get(&player)
            .is_some_and(|slot| slot.bundles_ack >= self.next_tick)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_protocol::{decode, Buttons, Input, MAX_DATAGRAM_SIZE};

    const P0: PlayerId = PlayerId(0);
    const P1: PlayerId = PlayerId(1);
    const P2: PlayerId = PlayerId(2);
    const TIMEOUT: Duration = Duration::from_secs(2);

    fn input(b: u8) -> Input {
        Input {
            buttons: Buttons(b),
            axes: None,
        }
    }

    fn send(relay: &mut Relay, p: PlayerId, first: u32, buttons: &[u8], now: Duration) {
        let datagram = InputDatagram {
            bundles_ack: Tick(0),
            first_tick: Tick(first),
            inputs: buttons.iter().map(|&b| input(b)).collect(),
        };
        relay.receive(p, &datagram, now);
    }

    fn bundles(relay: &Relay, p: PlayerId) -> BundleDatagram {
        let bytes = relay.datagram_for(p, MAX_DATAGRAM_SIZE).unwrap();
        let ServerDatagram::Bundles(d) = decode(&bytes, MAX_DATAGRAM_SIZE).unwrap();
        d
    }

    #[test]
    fn bundles_a_tick_only_when_every_player_sent_it() {
        let mut relay = Relay::new(&[P0, P1], TIMEOUT, Duration::ZERO);
        send(&mut relay, P0, 0, &[1, 2], Duration::ZERO);
        assert_eq!(relay.complete(), 0);
        send(&mut relay, P1, 0, &[3], Duration::ZERO);
        assert_eq!(relay.complete(), 1);
        assert_eq!(relay.next_tick(), Tick(1));
        let d = bundles(&relay, P0);
        assert_eq!(d.first_tick, Tick(0));
        assert_eq!(
            d.bundles[0].inputs,
            vec![
                PlayerInput {
                    player: P0,
                    input: input(1)
                },
                PlayerInput {
                    player: P1,
                    input: input(3)
                }
            ]
        );
        assert_eq!(d.inputs_ack, Tick(2));
        assert_eq!(bundles(&relay, P1).inputs_ack, Tick(1));
    }

    #[test]
    fn first_input_wins_and_repeats_are_counted() {
        let mut relay = Relay::new(&[P0], TIMEOUT, Duration::ZERO);
        send(&mut relay, P0, 0, &[1, 1], Duration::ZERO);
        let repeat = InputDatagram {
            bundles_ack: Tick(0),
            first_tick: Tick(1),
            inputs: vec![input(9), input(2)],
        };
        let outcome = relay.receive(P0, &repeat, Duration::ZERO);
        assert_eq!(
            outcome,
            InputOutcome {
                accepted: 1,
                repeated: 1,
                out_of_window: 0
            }
        );
        relay.complete();
        let d = bundles(&relay, P0);
        let got: Vec<u8> = d
            .bundles
            .iter()
            .map(|b| b.inputs[0].input.buttons.0)
            .collect();
        assert_eq!(got, vec![1, 1, 2]);
        // Inputs for already bundled ticks are repeats, never a second bundle.
        assert_eq!(relay.receive(P0, &repeat, Duration::ZERO).repeated, 2);
        assert_eq!(relay.complete(), 0);
    }

    #[test]
    fn inputs_far_ahead_are_refused() {
        let mut relay = Relay::new(&[P0], TIMEOUT, Duration::ZERO);
        let far = InputDatagram {
            bundles_ack: Tick(0),
            first_tick: Tick(INPUT_WINDOW),
            inputs: vec![input(1)],
        };
        assert_eq!(relay.receive(P0, &far, Duration::ZERO).out_of_window, 1);
        assert_eq!(
            relay.receive(PlayerId(7), &far, Duration::ZERO),
            InputOutcome::default()
        );
    }

    #[test]
    fn a_disconnected_player_is_dropped_at_its_first_missing_tick() {
        let mut relay = Relay::new(&[P0, P1, P2], TIMEOUT, Duration::ZERO);
        send(&mut relay, P0, 0, &[1; 6], Duration::ZERO);
        send(&mut relay, P1, 0, &[1; 3], Duration::ZERO);
        send(&mut relay, P2, 0, &[1; 6], Duration::ZERO);
        assert_eq!(relay.complete(), 3);
        let drop = relay.remove(P1, DropReason::Disconnected).unwrap();
        assert_eq!(drop.tick, Tick(3));
        assert_eq!(relay.remove(P1, DropReason::Timeout), None);
        assert_eq!(relay.complete(), 3);
        let d = bundles(&relay, P0);
        assert_eq!(d.bundles[3].left, vec![P1]);
        assert_eq!(d.bundles[3].inputs.len(), 2);
        assert!(d.bundles[4].left.is_empty());
        assert_eq!(relay.players().collect::<Vec<_>>(), vec![P0, P2]);
    }

    #[test]
    fn a_leaving_player_keeps_the_inputs_it_already_sent() {
        let mut relay = Relay::new(&[P0, P1], TIMEOUT, Duration::ZERO);
        send(&mut relay, P1, 0, &[1; 5], Duration::ZERO);
        let drop = relay.remove(P1, DropReason::Left).unwrap();
        assert_eq!(drop.tick, Tick(5));
        send(&mut relay, P1, 5, &[1], Duration::ZERO);
        send(&mut relay, P0, 0, &[1; 8], Duration::ZERO);
        assert_eq!(relay.complete(), 8);
        let d = bundles(&relay, P0);
        assert_eq!(d.bundles[4].inputs.len(), 2);
        assert_eq!(d.bundles[5].left, vec![P1]);
        assert_eq!(d.bundles[5].inputs.len(), 1);
    }

    #[test]
    fn silence_past_the_timeout_drops_the_player() {
        let mut relay = Relay::new(&[P0, P1], TIMEOUT, Duration::ZERO);
        send(&mut relay, P0, 0, &[1; 4], Duration::from_secs(2));
        assert!(relay.poll_timeouts(Duration::from_secs(2)).is_empty());
        let drops = relay.poll_timeouts(Duration::from_millis(2001));
        assert_eq!(
            drops,
            vec![Drop {
                player: P1,
                tick: Tick(0),
                reason: DropReason::Timeout
            }]
        );
        assert_eq!(relay.complete(), 4);
        assert!(relay.poll_timeouts(Duration::from_secs(3)).is_empty());
        assert!(!relay.is_empty());
    }

    #[test]
    fn acknowledged_bundles_are_not_repeated_and_history_is_trimmed() {
        let mut relay = Relay::new(&[P0, P1], TIMEOUT, Duration::ZERO);
        send(&mut relay, P0, 0, &[1; 10], Duration::ZERO);
        send(&mut relay, P1, 0, &[1; 10], Duration::ZERO);
        relay.complete();
        assert_eq!(bundles(&relay, P0).bundles.len(), 10);
        let ack = InputDatagram {
            bundles_ack: Tick(7),
            first_tick: Tick(10),
            inputs: vec![],
        };
        relay.receive(P0, &ack, Duration::ZERO);
        let d = bundles(&relay, P0);
        assert_eq!((d.first_tick, d.bundles.len()), (Tick(7), 3));
        assert_eq!(bundles(&relay, P1).bundles.len(), 10);
        relay.receive(P1, &ack, Duration::ZERO);
        assert_eq!(relay.history_start, Tick(7));
        assert!(!relay.is_up_to_date(P0));
    }

    #[test]
    fn datagrams_fit_the_size_limit_oldest_bundles_first() {
        let players: Vec<PlayerId> = (0..64).map(PlayerId).collect();
        let mut relay = Relay::new(&players, TIMEOUT, Duration::ZERO);
        for &p in &players {
            send(&mut relay, p, 0, &[1; 40], Duration::ZERO);
        }
        assert_eq!(relay.complete(), 40);
        let bytes = relay.datagram_for(P0, MAX_DATAGRAM_SIZE).unwrap();
        assert!(bytes.len() <= MAX_DATAGRAM_SIZE);
        let d = bundles(&relay, P0);
        assert_eq!(d.first_tick, Tick(0));
        assert!(!d.bundles.is_empty() && d.bundles.len() < 40);
    }
}
