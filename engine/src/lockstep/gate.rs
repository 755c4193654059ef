//! The lockstep gate: holds the bundles received from the server and the
//! schedule of local inputs, and answers whether the next tick may run.
//!
//! Pure state (no socket, no clock), driven by requests in the ggrs style:
//! the frontend asks [`InputBuffer::poll`] and carries out the answer.
//!
//! Local input is sampled once per simulated tick: after stepping tick `t`
//! the frontend asks [`InputBuffer::local_ticks_due`] which ticks need an
//! input now — normally exactly `t + input_delay`. The first `input_delay`
//! ticks a client plays get neutral inputs ([`InputBuffer::initial_inputs`]),
//! so the relay needs no special case.
//!
//! While the simulation waits for a bundle, the clock still says which
//! steps are overdue; [`InputBuffer::local_ticks_due_ahead`] asks for the
//! inputs they would have sampled, so a client stalled by a late peer
//! still sends its own inputs on time.
//!
//! The delay may change between ticks ([`InputBuffer::set_input_delay`])
//! without breaking the rule that every tick gets exactly one input: a
//! longer delay makes the next call return two ticks (the same sample
//! fills the gap), a shorter one makes calls return nothing until the
//! schedule catches up.

use std::collections::VecDeque;
use std::ops::Range;

use lockstep_protocol::{Bundle, Input, Tick};

/// What the frontend should do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Simulate `tick` with this bundle.
    Step(Tick, Bundle),
    /// The bundle for the next tick has not arrived: wait, do not simulate.
    Stall(Tick),
}

/// Bundles waiting to be simulated and the local input schedule.
#[derive(Debug)]
pub struct InputBuffer {
    /// Next tick to simulate; `pending[0]` is its bundle if received.
    next_tick: Tick,
    /// Received, not yet simulated bundles for `next_tick..`, contiguous.
    pending: VecDeque<Bundle>,
    input_delay: u32,
    /// First tick this client gives inputs for.
    first_input_tick: Tick,
    /// First tick that has no local input yet.
    next_local: Tick,
}

impl InputBuffer {
    /// A buffer at tick 0 for a client whose inputs start at
    /// `first_input_tick`, with an input delay of at least 1.
    pub fn new(input_delay: u8, first_input_tick: Tick) -> Self {
        let input_delay = u32::from(input_delay.max(1));
        InputBuffer {
            next_tick: Tick(0),
            pending: VecDeque::new(),
            input_delay,
            first_input_tick,
            next_local: first_input_tick.plus(input_delay),
        }
    }

    /// The same buffer, for a game that starts from a snapshot of the
    /// world after `tick` ticks: its first bundle is `tick`'s.
    pub fn starting_at(mut self, tick: Tick) -> Self {
        self.next_tick = tick;
        self
    }

    /// The same buffer for a client that reconnected and kept its world:
    /// the bundles it holds stay, and its inputs start afresh at
    /// `first_input_tick` (the server lost those it had not bundled),
    /// `input_delay` ticks of neutral ones first.
    pub fn reconnected(&mut self, input_delay: u8, first_input_tick: Tick) {
        self.input_delay = u32::from(input_delay.max(1));
        self.first_input_tick = first_input_tick;
        self.next_local = first_input_tick.plus(self.input_delay);
    }

    /// Neutral inputs for the ticks before the first sampled input.
    pub fn initial_inputs(&self) -> Vec<(Tick, Input)> {
        (self.first_input_tick.0..self.next_local.0)
            .map(|t| (Tick(t), Input::default()))
            .collect()
    }

    /// Ticks between sampling and simulating an input.
    pub fn input_delay(&self) -> u32 {
        self.input_delay
    }

    /// Changes the delay from the next sample on (at least 1).
    pub fn set_input_delay(&mut self, delay: u8) {
        self.input_delay = u32::from(delay.max(1));
    }

    /// First tick with no local input yet: the next one to sample.
    pub fn next_local(&self) -> Tick {
        self.next_local
    }

    /// Next tick to simulate.
    pub fn next_tick(&self) -> Tick {
        self.next_tick
    }

    /// First tick whose bundle has not been received: everything before it
    /// is held (or already simulated).
    pub fn received_through(&self) -> Tick {
        self.next_tick.plus(self.pending.len() as u32)
    }

    /// Bundles received but not yet simulated.
    pub fn buffered(&self) -> usize {
        self.pending.len()
    }

    /// The last bundle received and not yet simulated.
    pub fn newest(&self) -> Option<&Bundle> {
        self.pending.back()
    }

    /// Adds bundles for `first_tick, first_tick + 1, ...`. Ticks already
    /// held or simulated are ignored (the server repeats unacknowledged
    /// bundles); a batch starting after a gap is ignored too, because the
    /// server always resends from the acknowledged tick. Returns how many
    /// new bundles were taken.
    pub fn receive(&mut self, first_tick: Tick, bundles: impl IntoIterator<Item = Bundle>) -> u32 {
        let have = self.received_through();
        if first_tick > have {
            return 0;
        }
        let skip = have.since(first_tick) as usize;
        let before = self.pending.len();
        self.pending.extend(bundles.into_iter().skip(skip));
        (self.pending.len() - before) as u32
    }

    /// Whether the next tick may run now.
    pub fn poll(&mut self) -> Gate {
        match self.pending.pop_front() {
            Some(bundle) => {
                let tick = self.next_tick;
                self.next_tick = tick.next();
                Gate::Step(tick, bundle)
            }
            None => Gate::Stall(self.next_tick),
        }
    }

    /// The ticks that need a local input after the last [`Gate::Step`]: up
    /// to the stepped tick plus the delay, from the first tick without one.
    /// Usually one tick; two or more right after the delay grew; none
    /// right after it shrank, and none before this client's first tick.
    pub fn local_ticks_due(&mut self) -> Range<Tick> {
        // poll already advanced next_tick past the stepped tick.
        self.local_ticks_due_ahead(0)
    }

    /// The ticks that need a local input now that the clock owes
    /// `overdue` steps the bundles have not allowed yet: the inputs those
    /// steps would have asked for. Inputs follow the clock, not the
    /// simulation, so a stall (a peer's late input) does not make this
    /// client's inputs late too.
    pub fn local_ticks_due_ahead(&mut self, overdue: u32) -> Range<Tick> {
        let through = self.next_tick.plus(overdue).plus(self.input_delay);
        let due = self.next_local..through.max(self.next_local);
        self.next_local = due.end;
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_protocol::{Buttons, PlayerId, PlayerInput};

    fn bundle(mark: u8) -> Bundle {
        Bundle {
            inputs: vec![PlayerInput {
                player: PlayerId(0),
                input: Input {
                    buttons: Buttons(mark),
                    axes: None,
                },
            }],
            ..Bundle::default()
        }
    }

    fn mark(gate: Gate) -> (u32, u8) {
        match gate {
            Gate::Step(t, b) => (t.0, b.inputs[0].input.buttons.0),
            Gate::Stall(t) => panic!("stalled at {t}"),
        }
    }

    #[test]
    fn stalls_until_the_bundle_for_the_next_tick_arrives() {
        let mut buffer = InputBuffer::new(3, Tick(0));
        assert_eq!(buffer.poll(), Gate::Stall(Tick(0)));
        assert_eq!(buffer.poll(), Gate::Stall(Tick(0)));
        // A bundle for a later tick does not unblock tick 0.
        assert_eq!(buffer.receive(Tick(1), [bundle(1)]), 0);
        assert_eq!(buffer.poll(), Gate::Stall(Tick(0)));
        assert_eq!(buffer.receive(Tick(0), [bundle(0)]), 1);
        assert_eq!(mark(buffer.poll()), (0, 0));
        assert_eq!(buffer.poll(), Gate::Stall(Tick(1)));
    }

    #[test]
    fn delivers_ticks_in_order_and_never_twice() {
        let mut buffer = InputBuffer::new(3, Tick(0));
        assert_eq!(buffer.receive(Tick(0), [bundle(0), bundle(1)]), 2);
        // A repeat overlapping what is held adds only the new tick.
        assert_eq!(
            buffer.receive(Tick(0), [bundle(9), bundle(9), bundle(2)]),
            1
        );
        assert_eq!(mark(buffer.poll()), (0, 0));
        assert_eq!(mark(buffer.poll()), (1, 1));
        // A repeat of already simulated ticks adds nothing.
        assert_eq!(buffer.receive(Tick(0), [bundle(9), bundle(9)]), 0);
        assert_eq!(mark(buffer.poll()), (2, 2));
        assert_eq!(buffer.poll(), Gate::Stall(Tick(3)));
        assert_eq!(buffer.received_through(), Tick(3));
    }

    fn ticks(range: Range<Tick>) -> Vec<u32> {
        (range.start.0..range.end.0).collect()
    }

    #[test]
    fn local_input_is_scheduled_input_delay_ticks_ahead() {
        let mut buffer = InputBuffer::new(3, Tick(0));
        let initial: Vec<u32> = buffer.initial_inputs().iter().map(|(t, _)| t.0).collect();
        assert_eq!(initial, vec![0, 1, 2]);
        buffer.receive(Tick(0), [bundle(0), bundle(0)]);
        mark(buffer.poll());
        assert_eq!(ticks(buffer.local_ticks_due()), vec![3]);
        mark(buffer.poll());
        assert_eq!(ticks(buffer.local_ticks_due()), vec![4]);
    }

    #[test]
    fn changing_the_delay_never_skips_or_repeats_a_tick() {
        let mut buffer = InputBuffer::new(3, Tick(0));
        let mut given: Vec<u32> = buffer.initial_inputs().iter().map(|(t, _)| t.0).collect();
        buffer.receive(Tick(0), (0..20).map(|_| bundle(0)));
        for step in 0..20 {
            match step {
                5 => buffer.set_input_delay(6),
                12 => buffer.set_input_delay(2),
                _ => {}
            }
            mark(buffer.poll());
            given.extend(ticks(buffer.local_ticks_due()));
        }
        // Every tick from 0 on got exactly one input, in order.
        assert_eq!(given, (0..given.len() as u32).collect::<Vec<_>>());
        // And the schedule ends at the last stepped tick plus the new delay.
        assert_eq!(*given.last().unwrap(), 19 + 2);
    }

    #[test]
    fn a_rejoining_client_gives_inputs_from_its_first_tick_only() {
        let mut buffer = InputBuffer::new(3, Tick(10));
        let initial: Vec<u32> = buffer.initial_inputs().iter().map(|(t, _)| t.0).collect();
        assert_eq!(initial, vec![10, 11, 12]);
        buffer.receive(Tick(0), (0..12).map(bundle));
        let mut given = Vec::new();
        for _ in 0..12 {
            mark(buffer.poll());
            given.extend(ticks(buffer.local_ticks_due()));
        }
        assert_eq!(given, vec![13, 14]);
    }
}
