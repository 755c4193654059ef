//! The smallest frontend that plays a networked game, headless and on
//! simulated time: a driver of the play loop every client shares
//! (`lockstep_link::play`, as `lockstep_client::play` and the page drive
//! it). It hands the loop the connection's events and the time, runs the
//! ticks of each frame without a budget (the simulated clock stands still
//! while they run), and ends the game at its last tick; a bot chooses the
//! player's inputs.
//!
//! It answers with the [`NetCommand`]s for the connection instead of
//! sending them, and with lines for the event log. Left out, because they
//! measure the real machine: the capacity reports (so speed control never
//! slows a cluster down), recordings, dumps and the HUD.

use std::time::{Duration, Instant};

use lockstep_client::link::connection::{Closed, NetCommand, NetEvent, Started};
use lockstep_client::link::play::{LoopOptions, Notice, Play, Step};
use lockstep_engine::lockstep::net_game::GameOptions;
use lockstep_engine::HasBots;
use lockstep_protocol::{Input, Tick};

/// How long a stalled frontend waits at most before it looks again,
/// unless an event wakes it first (`lockstep_client::play::headless`'s wait).
const STALL_WAIT: Duration = Duration::from_millis(50);

/// What a frontend asks for and says after one call.
#[derive(Debug, Default)]
pub(crate) struct Out {
    /// For the connection, in order.
    pub(crate) commands: Vec<NetCommand>,
    /// For the event log, in order.
    pub(crate) lines: Vec<String>,
}

impl Out {
    fn say(&mut self, line: String) {
        self.lines.push(line);
    }
}

/// One client's frontend.
#[derive(Debug)]
pub(crate) struct Frontend<G: HasBots> {
    options: GameOptions,
    /// The seed of the bot that plays a player.
    bot_seed: u64,
    /// End each game when its world reaches this tick.
    ticks: Option<u32>,
    /// Games still to play on this connection, the current one included.
    games: u32,
    /// What the cluster's simulated time counts from.
    epoch: Instant,
    /// The running game.
    game: Option<Play<G>>,
    /// When the next frame runs, as a headless client sleeps: when the
    /// next tick is due, or when an event wakes it.
    wake: Duration,
    /// The tick the game waits for, while it stalls.
    stalled_on: Option<Tick>,
    /// Whether the last tick simulated had our input stood in for.
    replaced: bool,
    /// Said GameDone; say Ready at the next lobby.
    rematch: bool,
    /// Over: the connection closed.
    pub(crate) closed: bool,
    /// The world's tick and hash when the last game ended at `ticks`.
    pub(crate) last_final: Option<(Tick, u64)>,
}

impl<G: HasBots> Frontend<G> {
    pub(crate) fn new(
        options: GameOptions,
        bot_seed: u64,
        ticks: Option<u32>,
        games: u32,
        epoch: Instant,
    ) -> Self {
        Frontend {
            options,
            bot_seed,
            ticks,
            games: games.max(1),
            epoch,
            game: None,
            wake: Duration::ZERO,
            stalled_on: None,
            replaced: false,
            rematch: false,
            closed: false,
            last_final: None,
        }
    }

    /// The running game, if any.
    pub(crate) fn game(&self) -> Option<&lockstep_engine::lockstep::net_game::NetGame<G>> {
        self.game.as_ref().map(Play::game)
    }

    /// Takes one event of the connection at `now`.
    pub(crate) fn handle(&mut self, event: NetEvent, now: Duration) -> Out {
        let mut out = Out::default();
        self.wake = Duration::ZERO;
        if let NetEvent::Started(started) = event {
            self.start(started, &mut out);
            return out;
        }
        match &event {
            NetEvent::Welcome { player, .. } => out.say(format!("welcome player={player}")),
            NetEvent::Lobby(_) if self.rematch => {
                self.rematch = false;
                out.commands.push(NetCommand::Ready(true));
                out.say("ready".into());
            }
            NetEvent::Desync(notice) => {
                let diverged: Vec<String> = notice.diverged.iter().map(|p| p.to_string()).collect();
                out.say(format!(
                    "desync tick={} diverged={}",
                    notice.tick,
                    diverged.join(",")
                ));
            }
            NetEvent::Pinpointed { tick, first } => {
                out.say(format!("pinpointed tick={tick} first={first}"));
            }
            NetEvent::Speed {
                from_tick, percent, ..
            } => out.say(format!("speed percent={} from_tick={from_tick}", percent.0)),
            NetEvent::SnapshotRequest(tick) => {
                let held = self.game().and_then(|game| game.world_at(*tick)).is_some();
                if !held {
                    out.say(format!("snapshot unavailable tick={tick}"));
                }
            }
            NetEvent::Reconnecting { reason, .. } => out.say(format!("reconnecting {reason}")),
            NetEvent::Closed(closed) => {
                self.closed = true;
                let line = match closed {
                    Closed::Left => "closed left".to_string(),
                    Closed::Refused(why) => format!("closed refused {why}"),
                    Closed::CannotPlay(why) => format!("closed cannot-play {why}"),
                    Closed::Ended(why) => format!("closed ended {why}"),
                    Closed::Lost(why) => format!("closed lost {why}"),
                };
                out.say(line);
            }
            _ => {}
        }
        if let Some(play) = &mut self.game {
            // Only a Start can fail, and it is taken above.
            if let Err(e) = play.handle(event, now) {
                out.say(format!("unplayable start: {e}"));
            }
            carry_out(play, &mut out);
        }
        out
    }

    /// Starts the game of `started`, from tick 0 or from its snapshot, as
    /// a join or a rejoin does.
    fn start(&mut self, started: Started, out: &mut Out) {
        let start = started.start.clone();
        let options = LoopOptions {
            bot: Some(self.bot_seed),
            ticks: self.ticks,
            game: self.options,
            ..LoopOptions::default()
        };
        let mut play = match Play::start(started, options, self.epoch) {
            Ok(play) => play,
            Err(why) => {
                out.say(format!("unplayable start: {why}"));
                out.commands.push(NetCommand::Leave);
                self.game = None;
                return;
            }
        };
        out.say(format!(
            "started seed={} snapshot={}",
            start.seed,
            start
                .snapshot
                .map_or_else(|| "none".to_string(), |t| t.to_string())
        ));
        carry_out(&mut play, out);
        self.game = Some(play);
        self.stalled_on = None;
    }

    /// One frame at `now`, if the frontend is awake: every tick due runs
    /// (flipcode's inner loop), the bot's input goes out for every tick
    /// that needs one, and the game ends at its last tick.
    pub(crate) fn frame(&mut self, now: Duration) -> Out {
        let mut out = Out::default();
        if now < self.wake {
            return out;
        }
        let Some(play) = &mut self.game else {
            return out;
        };
        play.begin_frame(now, Input::default());
        loop {
            let replaced_before = play.game().stats().replaced_inputs;
            match play.step() {
                Step::Ran { tick } => {
                    if self.stalled_on.take().is_some() {
                        out.say(format!("stall over tick={tick}"));
                    }
                    let replaced = play.game().stats().replaced_inputs > replaced_before;
                    match (replaced, self.replaced) {
                        (true, false) => out.say(format!("stood in for tick={}", tick.0 - 1)),
                        (false, true) => out.say(format!("own input again tick={tick}")),
                        _ => {}
                    }
                    self.replaced = replaced;
                }
                Step::Stalled => {
                    let tick = play.game().current.tick();
                    if self.stalled_on.is_none() {
                        out.say(format!("stalled tick={tick}"));
                    }
                    self.stalled_on = Some(tick);
                    break;
                }
                Step::NotDue | Step::Finished => break,
            }
        }
        let frame = play.end_frame(Duration::ZERO);
        carry_out(play, &mut out);
        self.wake = match self.stalled_on {
            Some(_) => now + STALL_WAIT,
            None => now + Duration::from_nanos(play.game().until_due_ns()),
        };
        if frame.finished {
            let game = play.game();
            let (tick, hash) = (game.current.tick(), game.current.hash());
            out.say(format!("final tick={tick} hash={hash:016x}"));
            self.last_final = Some((tick, hash));
            self.games -= 1;
            if self.games == 0 {
                out.commands.push(NetCommand::Leave);
            } else {
                out.commands.push(NetCommand::GameDone);
                self.rematch = true;
            }
            self.game = None;
        }
        out
    }
}

/// Takes what the loop said: its commands but the capacity reports, and
/// the lines the event log keeps of its notices.
fn carry_out<G: HasBots>(play: &mut Play<G>, out: &mut Out) {
    let said = play.outbox();
    for command in said.commands {
        match command {
            NetCommand::Capacity(..) => {}
            NetCommand::Snapshot(tick, bytes) => {
                out.say(format!("snapshot sent tick={tick}"));
                out.commands.push(NetCommand::Snapshot(tick, bytes));
            }
            command => out.commands.push(command),
        }
    }
    for notice in said.notices {
        match notice {
            Notice::Reconnected { at, goes_on_from } => {
                out.say(format!("resumed tick={at} from={goes_on_from}"));
            }
            Notice::SnapshotNotSent { tick, why } => {
                out.say(format!("snapshot unencodable tick={tick}: {why}"));
            }
            _ => {}
        }
    }
}
