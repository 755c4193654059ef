//! The lockstep gate: holds the bundles received from the server and the
//! schedule of local inputs, and answers whether the next tick may run.
//!
//! Pure state (no socket, no clock), driven by requests in the ggrs style:
//! the frontend asks [`InputBuffer::poll`] and carries out the answer.
//!
//! Local input is sampled once per simulated tick: after stepping tick `t`
//! the frontend samples and calls [`InputBuffer::schedule_local`], which
//! schedules it for `t + input_delay`. Ticks `0..input_delay` have no
//! sampled input; every client sends neutral inputs for them
//! ([`InputBuffer::initial_inputs`]), so the relay needs no special case.

use std::collections::VecDeque;

use lockstep_protocol::{Bundle, Input, Tick};

/// What the frontend should do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Simulate `tick` with this bundle (remove its `left` players first).
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
}

impl InputBuffer {
    /// A buffer at tick 0 with a fixed input delay.
    pub fn new(input_delay: u8) -> Self {
        InputBuffer {
            next_tick: Tick(0),
            pending: VecDeque::new(),
            input_delay: u32::from(input_delay),
        }
    }

    /// Neutral inputs for the ticks before the first sampled input.
    pub fn initial_inputs(&self) -> Vec<(Tick, Input)> {
        (0..self.input_delay)
            .map(|t| (Tick(t), Input::default()))
            .collect()
    }

    /// Ticks between sampling and simulating an input.
    pub fn input_delay(&self) -> u32 {
        self.input_delay
    }

    /// Next tick to simulate.
    pub fn next_tick(&self) -> Tick {
        self.next_tick
    }

    /// First tick whose bundle has not been received: everything before it
    /// is held (or already simulated). Sent to the server as the ack.
    pub fn received_through(&self) -> Tick {
        self.next_tick.plus(self.pending.len() as u32)
    }

    /// Bundles received but not yet simulated.
    pub fn buffered(&self) -> usize {
        self.pending.len()
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

    /// The tick a local input sampled now is for: the tick just stepped
    /// plus the input delay. Call once after each [`Gate::Step`].
    pub fn schedule_local(&self) -> Tick {
        // poll already advanced next_tick past the stepped tick, and the
        // delay is at least 1, so this is stepped + delay.
        self.next_tick.plus(self.input_delay - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_protocol::{Buttons, PlayerId, PlayerInput};

    fn bundle(mark: u8) -> Bundle {
        Bundle {
            left: vec![],
            inputs: vec![PlayerInput {
                player: PlayerId(0),
                input: Input {
                    buttons: Buttons(mark),
                    axes: None,
                },
            }],
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
        let mut buffer = InputBuffer::new(3);
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
        let mut buffer = InputBuffer::new(3);
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

    #[test]
    fn local_input_is_scheduled_input_delay_ticks_ahead() {
        let mut buffer = InputBuffer::new(3);
        let initial: Vec<u32> = buffer.initial_inputs().iter().map(|(t, _)| t.0).collect();
        assert_eq!(initial, vec![0, 1, 2]);
        buffer.receive(Tick(0), [bundle(0), bundle(0)]);
        mark(buffer.poll());
        assert_eq!(buffer.schedule_local(), Tick(3));
        mark(buffer.poll());
        assert_eq!(buffer.schedule_local(), Tick(4));
    }
}
