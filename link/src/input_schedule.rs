//! The local player's inputs on the game's schedule, whatever the frame
//! does: which ticks need an input by a given time, so the network thread
//! can send them when the frontend is late.
//!
//! The frontend samples the input for tick `t + d` after it simulates tick
//! `t` ([`NetGame::local_ticks_due`]) and hands it to the network thread.
//! A window that draws for 40 ms would send the inputs due meanwhile up to
//! 40 ms late, and everybody's game would wait for them. So after each
//! frame's ticks the frontend publishes where its fixed-step clock stands
//! (a [`Schedule`]), and at each event pump the input the player holds.
//! The network thread keeps both in an [`InputSchedule`] and, [`GRACE`]
//! after each step is due, queues the held input for every tick due by
//! then that has none yet:
//!
//! ```text
//! frontend, every frame:  run the ticks due, sending each sample
//!                         publish Schedule { tick, lag, hold, tick length, delay } measured at the frame's start
//!                         pump events, publish the held input
//!                         draw (however long it takes)
//! network thread:         at schedule.next_due(now): link.queue_input(due(now))
//!                         (the link keeps the first input queued for a tick, so a
//!                         sample that arrives later is ignored)
//! ```
//!
//! # Rules
//! - Step `n + k` is due `k` ticks after the step the clock last ran was
//!   due: at `at + k * tick - lag`. In networked play the accumulator never
//!   discards time, so this holds across frames, and while the game stalls
//!   (the lag grows beyond a tick) the schedule keeps going on wall time,
//!   as the accumulator will when it catches up.
//! - After the step that reaches tick `m`, inputs are due for the ticks
//!   before `m + d`, as the gate's `local_ticks_due` says.
//! - Inputs fall due [`GRACE`] after their step, so that a frontend on time
//!   sends its own sample first.
//! - At most [`MAX_STEPS_AHEAD`] steps beyond the tick last published: a
//!   frontend frozen for good does not have its last held input sent for
//!   ever.
//! - No held input, nothing due: a bot's input depends on the world it has
//!   simulated, so only the frontend can give it.
//!
//! Pure: no clock. The network thread passes in times on the link's clock
//! (time since its epoch) and converts the frontend's instants to it.
//!
//! [`NetGame::local_ticks_due`]: lockstep_engine::lockstep::net_game::NetGame::local_ticks_due

use std::time::Duration;

use lockstep_engine::lockstep::net_game::NetGame;
use lockstep_engine::Game;
use lockstep_protocol::{Input, Tick};

/// How long after a step is due its inputs are sent on schedule: a
/// frontend that runs the step on time sends its own sample first (its
/// channel to the network thread takes microseconds), and one that is late
/// costs at most this much. A window at 120 frames a second runs a step up
/// to 8 ms after it is due, so most of its inputs go on schedule: the
/// input of the last event pump, which its frame would sample too, sooner.
pub const GRACE: Duration = Duration::from_millis(2);

/// Most steps the schedule runs ahead of the tick the frontend last
/// published: two seconds at 60 Hz, as long as the server waits for a
/// silent player by default, and with any input delay still far inside the
/// 256 ticks ahead of the game that the server accepts.
pub const MAX_STEPS_AHEAD: u32 = 120;

/// Where the frontend's fixed-step clock stood after a frame's ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// The world's tick: the next step simulates this tick's bundle.
    pub tick: Tick,
    /// Game time owed beyond the last step, in nanoseconds (the
    /// accumulator's lag): under a tick while the game keeps up, more while
    /// it waits for a bundle.
    pub lag_ns: u64,
    /// Real time the clock waits out before it counts again, in
    /// nanoseconds: a schedule just postponed (a speed change, a longer
    /// playout delay). Zero whenever `lag_ns` is not.
    pub hold_ns: u64,
    /// The length of a tick, in nanoseconds.
    pub tick_ns: u64,
    /// The input delay in force, in ticks.
    pub delay: u32,
}

impl Schedule {
    /// Where `game`'s clock stands now, once it runs live; `None` while it
    /// catches up through history (its clock says nothing of the live
    /// game's then).
    pub fn of<G: Game>(game: &NetGame<G>) -> Option<Schedule> {
        if game.catching_up().is_some() {
            return None;
        }
        let clock = game.clock();
        Some(Schedule {
            tick: game.current.tick(),
            lag_ns: clock.lag_ns(),
            hold_ns: clock.hold_ns(),
            tick_ns: clock.tick_ns(),
            delay: game.input_delay(),
        })
    }

    /// Steps due `elapsed` after the measurement, each counted from
    /// [`GRACE`] after its due time; at most [`MAX_STEPS_AHEAD`].
    fn steps_due(&self, elapsed: Duration) -> u32 {
        let owed = nanos(elapsed)
            .saturating_sub(self.hold_ns)
            .saturating_add(self.lag_ns)
            .saturating_sub(nanos(GRACE));
        u32::try_from(owed / self.tick_ns.max(1))
            .unwrap_or(u32::MAX)
            .min(MAX_STEPS_AHEAD)
    }

    /// The first tick whose input is not due `elapsed` after the
    /// measurement.
    pub fn inputs_due_before(&self, elapsed: Duration) -> Tick {
        self.tick.plus(self.steps_due(elapsed)).plus(self.delay)
    }

    /// How long after the measurement more inputs fall due than `elapsed`
    /// after it; `None` once [`MAX_STEPS_AHEAD`] steps are due.
    pub fn next_due(&self, elapsed: Duration) -> Option<Duration> {
        let steps = self.steps_due(elapsed);
        if steps >= MAX_STEPS_AHEAD {
            return None;
        }
        let due = u64::from(steps + 1)
            .saturating_mul(self.tick_ns.max(1))
            .saturating_add(nanos(GRACE))
            .saturating_add(self.hold_ns)
            .saturating_sub(self.lag_ns);
        Some(Duration::from_nanos(due))
    }
}

/// The network thread's view of the local player: the input held and the
/// game's schedule, each as last published.
#[derive(Debug, Default)]
pub struct InputSchedule {
    held: Option<Input>,
    /// The last schedule and when it was measured (link time).
    schedule: Option<(Schedule, Duration)>,
}

impl InputSchedule {
    /// The player now holds `input`.
    pub fn hold(&mut self, input: Input) {
        self.held = Some(input);
    }

    /// The frontend measured `schedule` at `at`.
    pub fn publish(&mut self, schedule: Schedule, at: Duration) {
        self.schedule = Some((schedule, at));
    }

    /// The last tick whose input is due at `now`, and the held input to
    /// give it and any tick before it still without one. `None` before
    /// the first schedule, without a held input, or when no tick is due.
    pub fn due(&self, now: Duration) -> Option<(Tick, Input)> {
        let held = self.held?;
        let (schedule, at) = self.schedule?;
        let end = schedule.inputs_due_before(now.saturating_sub(at));
        let last = end.0.checked_sub(1)?;
        Some((Tick(last), held))
    }

    /// When [`Self::due`] next names a later tick than at `now`; `None`
    /// while nothing will fall due (no held input or schedule yet, or the
    /// frontend has not published for [`MAX_STEPS_AHEAD`] steps).
    pub fn next_due(&self, now: Duration) -> Option<Duration> {
        self.held?;
        let (schedule, at) = self.schedule?;
        schedule
            .next_due(now.saturating_sub(at))
            .map(|after| at + after)
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use lockstep_engine::lockstep::gate::InputBuffer;
    use lockstep_engine::timing::accumulator::{FixedStep, Policy};
    use lockstep_protocol::{Bundle, Buttons, InputDatagram, MAX_DATAGRAM_SIZE};

    use super::*;
    use crate::datagrams::Link;

    /// A tick at 60 Hz, in nanoseconds.
    const TICK_NS: u64 = 1_000_000_000 / 60;
    const TICK: Duration = Duration::from_nanos(TICK_NS);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn held(n: u8) -> Input {
        Input {
            buttons: Buttons(n),
            axes: None,
        }
    }

    /// The world at tick 10 with 4 ms owed, a delay of 3: the frontend has
    /// sent inputs through tick 12, and step 11 is due in 12.67 ms.
    fn at_tick_10() -> Schedule {
        Schedule {
            tick: Tick(10),
            lag_ns: 4_000_000,
            hold_ns: 0,
            tick_ns: TICK_NS,
            delay: 3,
        }
    }

    fn schedule(schedule: Schedule, at: Duration) -> InputSchedule {
        let mut inputs = InputSchedule::default();
        inputs.hold(held(1));
        inputs.publish(schedule, at);
        inputs
    }

    fn last_due(inputs: &InputSchedule, now: Duration) -> Option<u32> {
        inputs.due(now).map(|(tick, _)| tick.0)
    }

    #[test]
    fn an_input_falls_due_the_grace_after_its_step() {
        let at = ms(1000);
        let inputs = schedule(at_tick_10(), at);
        let step_11 = at + TICK - ms(4);
        // Until then only what the frontend sent after tick 10 is due.
        assert_eq!(last_due(&inputs, at), Some(12));
        assert_eq!(
            last_due(&inputs, step_11 + GRACE - Duration::from_nanos(1)),
            Some(12)
        );
        assert_eq!(inputs.next_due(at), Some(step_11 + GRACE));
        assert_eq!(inputs.due(step_11 + GRACE), Some((Tick(13), held(1))));
        // Then one more every tick.
        assert_eq!(
            inputs.next_due(step_11 + GRACE),
            Some(step_11 + GRACE + TICK)
        );
        assert_eq!(last_due(&inputs, step_11 + GRACE + TICK * 5), Some(18));
    }

    #[test]
    fn a_postponed_schedule_falls_due_the_hold_later() {
        let at = ms(1000);
        let postponed = Schedule {
            lag_ns: 0,
            hold_ns: 30_000_000,
            ..at_tick_10()
        };
        let inputs = schedule(postponed, at);
        // Step 11 waits out the 30 ms held back, then a whole tick.
        let step_11 = at + ms(30) + TICK;
        assert_eq!(inputs.next_due(at), Some(step_11 + GRACE));
        assert_eq!(
            last_due(&inputs, step_11 + GRACE - Duration::from_nanos(1)),
            Some(12)
        );
        assert_eq!(last_due(&inputs, step_11 + GRACE), Some(13));
    }

    #[test]
    fn nothing_is_due_without_a_held_input_or_a_schedule() {
        let mut bot = InputSchedule::default();
        bot.publish(at_tick_10(), ms(0));
        assert_eq!(bot.due(ms(500)), None);
        assert_eq!(bot.next_due(ms(0)), None);
        let mut unscheduled = InputSchedule::default();
        unscheduled.hold(held(1));
        assert_eq!(unscheduled.due(ms(500)), None);
        assert_eq!(unscheduled.next_due(ms(0)), None);
    }

    #[test]
    fn the_latest_held_input_is_given() {
        let mut inputs = schedule(at_tick_10(), ms(0));
        inputs.hold(held(7));
        assert_eq!(inputs.due(ms(20)), Some((Tick(13), held(7))));
    }

    #[test]
    fn a_delay_change_moves_the_due_ticks_by_the_difference() {
        let mut inputs = schedule(at_tick_10(), ms(0));
        assert_eq!(last_due(&inputs, ms(20)), Some(13));
        inputs.publish(
            Schedule {
                delay: 5,
                ..at_tick_10()
            },
            ms(0),
        );
        assert_eq!(last_due(&inputs, ms(20)), Some(15));
        // A shorter delay names ticks already given: nothing new to send
        // until the schedule passes them.
        inputs.publish(
            Schedule {
                delay: 2,
                ..at_tick_10()
            },
            ms(0),
        );
        assert_eq!(last_due(&inputs, ms(20)), Some(12));
    }

    #[test]
    fn a_stalled_game_keeps_its_schedule_on_wall_time() {
        // The game has waited 50 ms for bundle 10: three steps are owed.
        let stalled = Schedule {
            lag_ns: 50_000_000,
            hold_ns: 0,
            ..at_tick_10()
        };
        let at = ms(1000);
        let inputs = schedule(stalled, at);
        // Steps 11 and 12 were due more than the grace before the
        // measurement: their inputs go at once. Step 13 was due just
        // before it.
        assert_eq!(last_due(&inputs, at), Some(14));
        assert_eq!(last_due(&inputs, at + ms(2)), Some(15));
        // The schedule goes on while nobody publishes, as the accumulator
        // will catch up...
        assert_eq!(last_due(&inputs, at + ms(2) + TICK * 10), Some(25));
        // ...but at most MAX_STEPS_AHEAD steps beyond the published tick.
        let frozen = at + TICK * (MAX_STEPS_AHEAD + 10);
        assert_eq!(
            last_due(&inputs, frozen),
            Some(10 + MAX_STEPS_AHEAD + 3 - 1)
        );
        assert_eq!(inputs.next_due(frozen), None);
    }

    #[test]
    fn a_slow_tick_rate_has_nothing_due_within_a_frame() {
        // One tick a second: a frame 100 ms after a step finds nothing new.
        let slow = Schedule {
            tick: Tick(5),
            lag_ns: 0,
            hold_ns: 0,
            tick_ns: 1_000_000_000,
            delay: 1,
        };
        let inputs = schedule(slow, ms(0));
        assert_eq!(last_due(&inputs, ms(100)), Some(5));
        assert_eq!(inputs.next_due(ms(100)), Some(ms(1000) + GRACE));
    }

    /// One frame of a frontend that publishes after its ticks, as `play.rs`
    /// does: the accumulator is fed the frame's length, every due step
    /// runs, and the gate names the ticks whose inputs the frontend sends.
    struct Frontend {
        clock: FixedStep,
        gate: InputBuffer,
    }

    impl Frontend {
        fn new(delay: u8) -> Frontend {
            let mut gate = InputBuffer::new(delay, Tick(0));
            gate.receive(Tick(0), (0..1000).map(|_| Bundle::default()));
            Frontend {
                clock: FixedStep::new(60, Policy::NETWORKED),
                gate,
            }
        }

        /// Runs a frame of `elapsed`; returns the ticks sent and the
        /// schedule published.
        fn frame(&mut self, elapsed: Duration) -> (Vec<Tick>, Schedule) {
            self.clock.begin_frame(nanos(elapsed));
            let mut sent = Vec::new();
            while self.clock.due() {
                self.gate.poll();
                self.clock.stepped();
                let due = self.gate.local_ticks_due();
                sent.extend((due.start.0..due.end.0).map(Tick));
            }
            self.clock.end_frame();
            let schedule = Schedule {
                tick: self.gate.next_tick(),
                lag_ns: self.clock.lag_ns(),
                hold_ns: self.clock.hold_ns(),
                tick_ns: self.clock.tick_ns(),
                delay: self.gate.input_delay(),
            };
            (sent, schedule)
        }
    }

    #[test]
    fn republishing_every_frame_keeps_the_same_schedule() {
        let mut frontend = Frontend::new(3);
        let (_, first) = frontend.frame(ms(0));
        let from_the_first = schedule(first, ms(0));
        let mut now = ms(0);
        // Frames of every length, shorter and longer than a tick. Within
        // the grace after a frame the latest schedule knows better (the
        // frame ran the steps due); from then on both say the same.
        for elapsed in [7, 3, 25, 16, 40, 1, 9, 33, 17].map(ms) {
            now += elapsed;
            let (_, republished) = frontend.frame(elapsed);
            let latest = schedule(republished, now);
            for probe in [GRACE, GRACE + ms(5), ms(30)].map(|after| now + after) {
                assert_eq!(latest.due(probe), from_the_first.due(probe), "{probe:?}");
                assert_eq!(
                    latest.next_due(probe),
                    from_the_first.next_due(probe),
                    "{probe:?}"
                );
            }
        }
    }

    /// A game started at time zero with a delay of 3: the frontend, the
    /// link with the neutral inputs of ticks 0-2 queued (as
    /// `NetPlay::start` sends them), and the network thread's schedule,
    /// the player holding `held(1)`.
    fn started() -> (Frontend, Link, InputSchedule) {
        let mut link = Link::default();
        link.start(60, ms(0));
        for tick in 0..3 {
            link.queue_input(Tick(tick), Input::default());
        }
        let mut inputs = InputSchedule::default();
        inputs.hold(held(1));
        (Frontend::new(3), link, inputs)
    }

    #[test]
    fn a_frontend_on_time_leaves_nothing_to_send_on_schedule() {
        // A frame at each step's due time: between frames, whenever the
        // network thread looks, every due input has been sent already.
        let (mut frontend, mut link, mut inputs) = started();
        let mut now = Duration::ZERO;
        for _ in 0..100 {
            now += TICK;
            let (sent, published) = frontend.frame(TICK);
            for tick in sent {
                assert_eq!(count(link.queue_input(tick, held(2))), 1);
            }
            inputs.publish(published, now);
            for probe in [now, now + GRACE, now + TICK - Duration::from_nanos(1)] {
                let (tick, input) = inputs.due(probe).expect("inputs were due");
                assert!(link.queue_input(tick, input).is_empty(), "{tick}");
            }
            assert!(inputs.next_due(now) > Some(now + TICK));
        }
        let datagram = sent(&mut link);
        assert!(datagram.inputs[3..].iter().all(|&i| i == held(2)));
    }

    #[test]
    fn a_late_frontend_finds_its_ticks_given_and_every_tick_gets_one_input() {
        // Frames that draw for 40 ms: steps fall due while they draw, and
        // the network thread gives them the held input; the next frame's
        // samples for those ticks are ignored. Across delay changes, every
        // tick the gate or the schedule names gets exactly one input.
        let (mut frontend, mut link, mut inputs) = started();
        let (mut now, mut from_frames, mut on_schedule) = (Duration::ZERO, 0, 0);
        for frame in 0..30 {
            match frame {
                10 => frontend.gate.set_input_delay(6),
                20 => frontend.gate.set_input_delay(2),
                _ => {}
            }
            now += ms(40);
            let (sent, published) = frontend.frame(ms(40));
            for tick in sent {
                from_frames += count(link.queue_input(tick, held(2)));
            }
            inputs.publish(published, now);
            let mut at = now;
            while let Some(wake) = inputs.next_due(at).filter(|&w| w < now + ms(40)) {
                let (tick, input) = inputs.due(wake).expect("an input is due");
                on_schedule += count(link.queue_input(tick, input));
                at = wake;
            }
        }
        let datagram = sent(&mut link);
        let given = datagram.inputs.len();
        assert_eq!(3 + from_frames + on_schedule, given);
        assert_eq!(
            datagram.inputs.iter().filter(|&&i| i == held(1)).count(),
            on_schedule
        );
        // Most of each frame's ticks fell due while it drew.
        assert!(on_schedule > from_frames, "{on_schedule} {from_frames}");
        // The inputs reach as far as the gate's or the schedule's, no
        // further.
        let gate_end = frontend.gate.next_tick().0 + 2;
        let schedule_end = inputs
            .due(now + ms(40) - Duration::from_nanos(1))
            .unwrap()
            .0
             .0
            + 1;
        assert_eq!(given as u32, gate_end.max(schedule_end));
    }

    /// How many ticks a range holds.
    fn count(ticks: std::ops::Range<Tick>) -> usize {
        ticks.end.since(ticks.start) as usize
    }

    fn sent(link: &mut Link) -> InputDatagram {
        let bytes = link
            .next_datagram(ms(0), MAX_DATAGRAM_SIZE)
            .expect("a datagram");
        let lockstep_protocol::ClientDatagram::Inputs(datagram) =
            lockstep_protocol::decode(&bytes, MAX_DATAGRAM_SIZE).expect("it decodes");
        datagram
    }
}
