//! One frame of networked play: flipcode's inner loop, run a step at a
//! time so that the driver does what takes real time between steps (it
//! records the bundle, sleeps a tick's extra cost, stops once its
//! [`TICK_BUDGET`] is spent) without the loop calling back into it.
//! `begin_frame` hands the accumulator the time since the last frame,
//! each `step` runs one tick if its bundle is here and its time has come,
//! and `end_frame` reports, publishes the schedule and measures capacity.

use std::ops::Range;
use std::time::Duration;

use lockstep_engine::lockstep::net_game::Advance;
use lockstep_engine::timing::accumulator::FrameEnd;
use lockstep_engine::HasBots;
use lockstep_protocol::{Input, Tick};

use super::{Notice, Play};
use crate::connection::NetCommand;
use crate::input_schedule::Schedule;

/// Most real time one frame spends running ticks before the frontend
/// draws and hears the network (the driver measures it, between steps).
/// A machine too slow for the tick rate owes ticks all the time; without
/// a bound it would run them for up to a second at once, and learn of a
/// speed change that late. Owed ticks are not dropped: the next frame
/// runs them.
pub const TICK_BUDGET: Duration = Duration::from_millis(50);

/// A frame this long after the last means this machine stopped (a process
/// stopped, swapped out, a frozen window, a background tab): far longer
/// than any frame a running client draws.
const HICCUP: Duration = Duration::from_millis(150);

/// What one step of a frame did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Tick `tick` ran: its bundle is [`lockstep_engine::lockstep::net_game::NetGame::last_bundle`]
    /// for the driver to record.
    Ran {
        /// The tick the world reached.
        tick: Tick,
    },
    /// The next due tick waits for its bundle: the frame is over.
    Stalled,
    /// No tick is due yet: the frame is over.
    NotDue,
    /// The last tick asked for was reached: leave.
    Finished,
}

/// What one frame of ticks did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameTicks {
    /// Ticks simulated.
    pub steps: u32,
    /// Whether a due tick had to wait for its bundle.
    pub stalled: bool,
    /// The fixed-step loop's verdict (alpha for drawing).
    pub end: FrameEnd,
    /// Whether `ticks` was reached: leave now.
    pub finished: bool,
}

/// The frame under way.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Frame {
    /// When it began.
    now: Duration,
    /// Since the frame before.
    elapsed: Duration,
    /// The input the frontend holds, for ticks sampled this frame.
    input: Input,
    /// Where the game stood when it began, and how late, for the capacity
    /// report.
    tick: Tick,
    behind: Duration,
    steps: u32,
    stalled: bool,
    /// Whether the game was catching up when it began.
    catching_up: bool,
    /// Whether it reached the last tick.
    finished: bool,
    /// Whether a step returned the frame's end.
    over: bool,
}

impl<G: HasBots> Play<G> {
    /// Begins the frame at `now`: the time since the last one goes to the
    /// accumulator, all of it. `input` is what the frontend's player
    /// holds, sampled for the ticks this frame runs when no bot plays.
    pub fn begin_frame(&mut self, now: Duration, input: Input) {
        let elapsed = now.saturating_sub(self.last_frame);
        self.game.begin_frame(elapsed.as_nanos() as u64);
        self.last_frame = now;
        if elapsed >= HICCUP {
            self.game.hiccup();
        }
        self.frame = Frame {
            now,
            elapsed,
            input,
            tick: self.game.current.tick(),
            behind: self.game.behind(),
            catching_up: self.game.catching_up().is_some(),
            ..Frame::default()
        };
    }

    /// Runs the next tick of the frame if it is due and its bundle is
    /// here. Once a step says anything but [`Step::Ran`], the frame is over
    /// and every further step says the same.
    pub fn step(&mut self) -> Step {
        if self.frame.finished {
            return Step::Finished;
        }
        if self.awaiting.is_some() {
            // A refused snapshot: nothing is due until the next Start.
            self.frame.over = true;
        }
        if self.frame.over {
            return if self.frame.stalled {
                Step::Stalled
            } else {
                Step::NotDue
            };
        }
        let playout = self.game.playout();
        match self.game.advance() {
            Advance::Ran {
                tick,
                report,
                replaced,
            } => {
                self.frame.steps += 1;
                self.after_tick(tick, playout, report, replaced);
                if self.options.ticks.is_some_and(|t| tick.0 >= t) {
                    self.frame.finished = true;
                }
                Step::Ran { tick }
            }
            Advance::Stalled(tick) => {
                self.stalled_on = Some(tick);
                // Our inputs follow the clock even while a peer's lateness
                // holds the simulation.
                let due = self.game.local_ticks_due_while_stalled();
                self.send_local(due);
                self.frame.stalled = true;
                self.frame.over = true;
                Step::Stalled
            }
            Advance::NotDue => {
                self.frame.over = true;
                Step::NotDue
            }
        }
    }

    /// What follows a tick: the lag line if the server stood in for us,
    /// the hash report, the input delay adapted, the inputs now due.
    fn after_tick(
        &mut self,
        tick: Tick,
        playout: u8,
        report: Option<(Tick, u64)>,
        replaced: Option<Tick>,
    ) {
        if self.game.playout() != playout {
            tracing::debug!(
                %tick,
                from = playout,
                to = self.game.playout(),
                delay = self.game.input_delay(),
                "playout delay changed"
            );
        }
        let now = self.frame.now;
        if let Some(line) = replaced.and_then(|t| self.replacements.replaced(t, now)) {
            self.say(Notice::Lag(line));
        }
        if let Some((tick, hash)) = report {
            self.command(NetCommand::Report(tick, hash));
        }
        let before = self.game.input_delay();
        let slack = self.own_slack();
        self.game.adapt_delay(self.link.figures(), slack);
        if self.game.input_delay() != before {
            tracing::debug!(
                %tick,
                from = before,
                to = self.game.input_delay(),
                ?slack,
                rtt_us = self.link.rtt.as_micros() as u64,
                "input delay changed"
            );
        }
        let due = self.game.local_ticks_due();
        self.send_local(due);
    }

    /// Ends the frame the ticks of which took `busy` of real time (the
    /// capacity meter's figure): says how a catch-up goes and what waits,
    /// tells the connection the schedule, reports capacity.
    pub fn end_frame(&mut self, busy: Duration) -> FrameTicks {
        if self.awaiting.is_some() {
            // Nothing ran, nothing is late and nothing is sent until the
            // server starts the game again.
            let end = self.game.end_frame();
            self.alpha = end.alpha;
            return FrameTicks {
                steps: 0,
                stalled: false,
                end,
                finished: false,
            };
        }
        let Frame { now, .. } = self.frame;
        if self.frame.catching_up {
            self.report_catch_up(now + busy);
        }
        self.publish_schedule(now);
        if let Some(line) = self.replacements.due(now) {
            self.say(Notice::Lag(line));
        }
        self.track_wait(self.frame.stalled && !self.frame.catching_up, now);
        let end = self.game.end_frame();
        self.alpha = end.alpha;
        let measured = self.capacity.frame(
            self.frame.elapsed.as_nanos() as u64,
            self.frame.steps,
            busy.as_nanos() as u64,
        );
        if let (Some(capacity), Some(_)) = (measured, self.game.me) {
            let (tick, behind) = (self.frame.tick, self.frame.behind);
            self.command(NetCommand::Capacity(capacity, tick, behind));
        }
        self.finished |= self.frame.finished;
        FrameTicks {
            steps: self.frame.steps,
            stalled: self.frame.stalled,
            end,
            finished: self.frame.finished,
        }
    }

    /// Samples one input (the bot's, or the frontend's) and sends it for
    /// every tick of `due`.
    fn send_local(&mut self, due: Range<Tick>) {
        if due.is_empty() {
            return;
        }
        let input = match &mut self.bot {
            Some(bot) => {
                let me = self.game.me.unwrap_or_default();
                self.game.current.bot_input(bot, me)
            }
            None => self.frame.input,
        };
        self.last_input = input;
        for t in due.start.0..due.end.0 {
            self.command(NetCommand::Input(Tick(t), input));
        }
    }

    /// Tells the connection where the game's clock stood at `now`, the
    /// start of this frame, once it runs live (not while catching up
    /// through history).
    fn publish_schedule(&mut self, now: Duration) {
        if self.held.is_none() {
            return;
        }
        if let Some(schedule) = Schedule::of(&self.game) {
            let at = self.epoch + now;
            self.command(NetCommand::Schedule(schedule, at));
        }
    }

    /// The progress of a fast-forward, and how long it took once done.
    fn report_catch_up(&mut self, now: Duration) {
        let notice = match self.game.catching_up() {
            Some((done, total)) => Notice::CatchingUp { done, total },
            None => {
                let tick = self.game.current.tick();
                let from = match (self.resumed_at, self.joined_from) {
                    (Some(at), _) => format!(
                        " after reconnecting at tick {at} ({} ticks simulated)",
                        tick.since(at)
                    ),
                    (None, Some(at)) => format!(
                        " from the snapshot of tick {at} ({} ticks re-simulated)",
                        tick.since(at)
                    ),
                    (None, None) => " from tick 0".to_string(),
                };
                Notice::CaughtUp {
                    tick,
                    ms: now.saturating_sub(self.started_at).as_millis(),
                    from,
                }
            }
        };
        self.say(notice);
    }

    /// Keeps when the current wait began, and says once whom it waits for
    /// when it is worth saying.
    fn track_wait(&mut self, stalled: bool, now: Duration) {
        if !stalled {
            if let Some(since) = self.waiting_since.take() {
                tracing::debug!(
                    tick = %self.stalled_on.unwrap_or_default(),
                    waited_us = now.saturating_sub(since).as_micros() as u64,
                    "stall ended"
                );
            }
            self.wait_reported = false;
            return;
        }
        self.waiting_since.get_or_insert(now);
        if !self.wait_reported {
            if let Some(line) = self.waiting_for(now) {
                self.say(Notice::Lag(line));
                self.wait_reported = true;
            }
        }
    }
}
