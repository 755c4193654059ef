//! Networked play of a game, as one pure state machine that the native
//! client and the browser peer both drive: the [`NetGame`] on the
//! connection's events, the accumulator with no MAX_LOOPS, the local input
//! on schedule, hash and capacity reports, snapshots the server asks for,
//! desync answers, speed changes, resume and rejoin after a reconnection,
//! and what is worth telling the player as [`Notice`]s.
//!
//! # Rules
//!
//! - **Given the time.** `now` counts from an epoch the driver picks at
//!   the start (an `Instant` it never reads); nothing here reads a clock,
//!   so a test drives it exactly.
//! - **Requests, not callbacks.** What the server must hear goes out as
//!   [`NetCommand`]s and what the player should read as [`Notice`]s, both
//!   in an [`Outbox`] the driver empties ([`Play::outbox`]) after every
//!   call. The driver carries out what is real time or I/O: the
//!   recording, desync dump files, a tick's extra cost, the budget of
//!   real time a frame spends on ticks, how long the ticks took.
//! - **Networked play never drops time.** There is no MAX_LOOPS: a frame
//!   runs the ticks owed until one stalls, none is due, the game is over,
//!   or the driver's [`TICK_BUDGET`] runs out; the rest wait for the next
//!   frame, never discarded.
//! - **Inputs follow the clock.** The local input is sampled after each
//!   tick and sent at once, and while a peer's lateness stalls the game,
//!   for the ticks the clock says are overdue. A held input (the keyboard,
//!   or nothing) is also told to the connection at every event pump
//!   ([`Play::hold`]) with the game's schedule after every frame, so it
//!   sends the inputs that fall due while the frame draws
//!   ([`crate::input_schedule`]); a bot's input needs its world, so only
//!   a frame gives it.
//!
//! # The driver's frame
//!
//! ```text
//! for event in events { play.handle(event, now)?; carry_out(play.outbox()) }
//! play.begin_frame(now, held_input);
//! let busy_from = clock();
//! while let Step::Ran { tick } = play.step() {
//!     record(play.game()); sleep(tick_cost);   // the driver's own
//!     if clock() - busy_from >= TICK_BUDGET { break }
//! }
//! let frame = play.end_frame(clock() - busy_from);   // alpha, stalled, finished
//! carry_out(play.outbox());
//! ```

mod frame;
mod notice;
pub mod replaced;
mod waiting;

use std::time::Duration;

use lockstep_engine::lockstep::net_game::{GameOptions, NetGame};
use lockstep_engine::timing::capacity::CapacityMeter;
use lockstep_engine::{HasBots, SetupError};
use lockstep_protocol::{
    encode, DesyncNotice, Input, PeerStatus, PlayerId, Slack, Start, Tick, MAX_SNAPSHOT_SIZE,
};
use web_time::Instant;

use crate::connection::{LinkStats, NetCommand, NetEvent, Started};
pub use frame::{FrameTicks, Step, TICK_BUDGET};
pub use notice::Notice;
use replaced::Replacements;

/// What the player asked of the loop beyond the server's Start.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoopOptions {
    /// Play the game's seeded bot; `None` plays the driver's input.
    pub bot: Option<u64>,
    /// The game is over for us at this tick.
    pub ticks: Option<u32>,
    /// Snapshots kept, fault injection and the input delay.
    pub game: GameOptions,
    /// Send inputs only as frames sample them, never held on schedule (a
    /// measurement of the difference, `--inputs-on-frames`).
    pub inputs_on_frames: bool,
    /// Send snapshots one ulp off the world simulated, to prove the
    /// server does not trust them (`--corrupt-snapshot`).
    pub corrupt_snapshot: bool,
}

/// What the game said since the driver last looked.
#[derive(Debug, Default)]
pub struct Outbox {
    /// For the connection, in order.
    pub commands: Vec<NetCommand>,
    /// For the player, in order.
    pub notices: Vec<Notice>,
}

/// Why a game could not start (or start again) from the server's Start.
/// (A snapshot that is not the majority's world is no such reason: the
/// game waits for the server's next Start instead.)
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JoinError {
    /// The game cannot be set up as the Start says.
    #[error(transparent)]
    Setup(#[from] SetupError),
}

/// A networked game of `G` in progress.
#[derive(Debug)]
pub struct Play<G: HasBots> {
    game: NetGame<G>,
    bot: Option<G::Bot>,
    /// The input last told to the connection as held; `None` when none is
    /// sent on schedule (a bot, a spectator, or switched off).
    held: Option<Input>,
    /// The input last sent or held, for a HUD.
    last_input: Input,
    /// What this machine sustains, reported to the server.
    capacity: CapacityMeter,
    link: LinkStats,
    /// The server's last lag indicator.
    peers: Option<PeerStatus>,
    options: LoopOptions,
    /// What `now` counts from.
    epoch: Instant,
    /// The frame under way, between `begin_frame` and `end_frame`.
    frame: frame::Frame,
    /// When the last frame began.
    last_frame: Duration,
    /// The alpha the last frame ended at.
    alpha: f32,
    /// The last desync announcement, for a banner.
    desync: Option<String>,
    /// When the current wait for a bundle began.
    waiting_since: Option<Duration>,
    /// The tick the game waits to run (for the debug log).
    stalled_on: Option<Tick>,
    /// Whether the current wait was already said.
    wait_reported: bool,
    /// What was said about the inputs the server stood in for.
    replacements: Replacements,
    /// When the game (re)started, to time a catch-up.
    started_at: Duration,
    /// The tick of the verified snapshot the game was joined from, if it
    /// was (the catch-up notice says so).
    joined_from: Option<Tick>,
    /// Whether the server is lost and the connection reconnects.
    reconnecting: bool,
    /// The tick the world stood at when the game went on after a
    /// reconnection (the catch-up notice says so).
    resumed_at: Option<Tick>,
    /// Whether `ticks` was reached.
    finished: bool,
    /// The tick of the server's snapshot this game refused: nothing runs
    /// and nothing is sent until the server's next Start.
    awaiting: Option<Tick>,
    outbox: Outbox,
}

impl<G: HasBots> Play<G> {
    /// Starts the game the server announced; `now` counts from `epoch`
    /// from here on.
    pub fn start(
        started: Started,
        options: LoopOptions,
        epoch: Instant,
    ) -> Result<Self, JoinError> {
        let at = started.at.saturating_duration_since(epoch);
        let Joined {
            game,
            from: joined_from,
            refused,
        } = join(&started, options.game)?;
        let on_schedule = !options.inputs_on_frames && options.bot.is_none() && game.me.is_some();
        let mut play = Play {
            bot: match (options.bot, game.me) {
                (Some(seed), Some(me)) => Some(G::bot(seed, me)),
                _ => None,
            },
            held: on_schedule.then(Input::default),
            last_input: Input::default(),
            capacity: CapacityMeter::new(started.start.tick_rate),
            link: LinkStats::default(),
            peers: None,
            options,
            epoch,
            frame: frame::Frame::default(),
            last_frame: at,
            alpha: 0.0,
            desync: None,
            waiting_since: None,
            stalled_on: None,
            wait_reported: false,
            replacements: Replacements::default(),
            started_at: at,
            joined_from,
            reconnecting: false,
            resumed_at: None,
            finished: false,
            awaiting: None,
            outbox: Outbox::default(),
            game,
        };
        match refused {
            Some((tick, why)) => play.refuse_snapshot(tick, why),
            None => play.send_initial_inputs(),
        }
        if let Some(input) = play.held {
            play.command(NetCommand::Hold(input));
        }
        Ok(play)
    }

    /// Applies one event of the connection at `now`. A Start is a rejoin:
    /// the server could not go on from our world. The connection's end
    /// (and the lobby around a game) is the driver's business.
    pub fn handle(&mut self, event: NetEvent, now: Duration) -> Result<(), JoinError> {
        match event {
            NetEvent::Bundles {
                first_tick,
                bundles,
            } => self.game.receive(first_tick, bundles),
            NetEvent::Stats(stats) => self.link = stats,
            NetEvent::Desync(notice) => self.on_desync(&notice),
            NetEvent::Pinpointed { tick, first } => self.on_pinpointed(tick, first),
            NetEvent::TraceDiff {
                tick,
                diverged,
                majority,
                lines,
            } => self.say(Notice::TraceDiff {
                tick,
                diverged,
                majority,
                lines,
            }),
            NetEvent::Peers(status) => self.peers = Some(status),
            NetEvent::Speed {
                from_tick,
                percent,
                postpone,
            } => self.game.set_speed(from_tick, percent, postpone),
            NetEvent::SnapshotRequest(tick) => self.send_snapshot(tick),
            NetEvent::Reconnecting { reason, for_secs } => {
                self.reconnecting = true;
                self.say(Notice::Reconnecting { reason, for_secs });
            }
            NetEvent::Resumed { start, at } => self.resume(&start, at, now),
            NetEvent::Started(started) => self.rejoin(&started)?,
            NetEvent::Welcome { .. } | NetEvent::Lobby(_) | NetEvent::Closed(_) => {}
        }
        Ok(())
    }

    /// Goes on after a reconnection with the world kept: only the bundles
    /// we lacked follow, and our inputs start again where the server says.
    fn resume(&mut self, start: &Start, at: Instant, now: Duration) {
        let tick = self.game.current.tick();
        self.game.resume(start);
        self.send_initial_inputs();
        self.reconnecting = false;
        self.resumed_at = Some(tick);
        self.started_at = at.saturating_duration_since(self.epoch).min(now);
        self.say(Notice::Reconnected {
            at: tick,
            goes_on_from: start.history,
        });
    }

    /// A reconnection the server could not continue from our world (it no
    /// longer holds the bundles we lack, or runs another game): the game
    /// starts again from the server's snapshot or tick 0, as a join would.
    /// After a refused snapshot, the server's next Start is the game
    /// begun again from another snapshot or from tick 0.
    fn rejoin(&mut self, started: &Started) -> Result<(), JoinError> {
        let Joined {
            game,
            from,
            refused,
        } = join(started, self.options.game)?;
        let after_refusal = self.awaiting.take().is_some();
        self.game = game;
        self.joined_from = from;
        self.reconnecting = false;
        self.resumed_at = None;
        self.started_at = started.at.saturating_duration_since(self.epoch);
        if let Some((tick, why)) = refused {
            self.refuse_snapshot(tick, why);
            return Ok(());
        }
        self.send_initial_inputs();
        if !after_refusal {
            self.say(Notice::Rejoined);
        }
        Ok(())
    }

    /// The server's snapshot of `tick` is not the majority's world: says
    /// so to the server and the player, and runs nothing until the
    /// server's next Start.
    fn refuse_snapshot(&mut self, tick: Tick, why: String) {
        self.awaiting = Some(tick);
        self.command(NetCommand::BadSnapshot(tick, why.clone()));
        self.say(Notice::SnapshotRefused { tick, why });
    }

    /// The tick of the server's snapshot this game refused, while it waits
    /// for the server to start it again from another.
    pub fn awaiting_start(&self) -> Option<Tick> {
        self.awaiting
    }

    fn send_initial_inputs(&mut self) {
        for (tick, input) in self.game.initial_inputs() {
            self.command(NetCommand::Input(tick, input));
        }
    }

    /// Announces a desync and answers with this machine's per-tick hashes,
    /// so the server can find where it began.
    fn on_desync(&mut self, notice: &DesyncNotice) {
        let names = self.game.names(&notice.diverged).join(", ");
        self.desync = Some(format!("DESYNC at tick {}: {names} diverged", notice.tick));
        self.say(Notice::Desync {
            tick: notice.tick,
            names,
            dump: String::new(),
        });
        if let Some((first_tick, hashes)) = self.game.tick_hashes(notice) {
            self.command(NetCommand::TickHashes(notice.tick, first_tick, hashes));
        }
    }

    /// Announces where the desync of `tick` began, and sends the server
    /// this player's sync trace of that tick, stepped again from the
    /// history, for it to compare.
    fn on_pinpointed(&mut self, tick: Tick, first: Tick) {
        self.say(Notice::Pinpointed {
            tick,
            first,
            dump: String::new(),
        });
        if let Some(trace) = self.game.trace_of(first) {
            let report = lockstep_engine::trace::to_report(&trace.entries);
            self.command(NetCommand::Trace(first, report));
        }
        if let Some(banner) = &mut self.desync {
            banner.push_str(&format!(" (from tick {first})"));
        }
    }

    /// Sends the server our world after `tick`, if the history ring still
    /// holds it (else the server's wait runs out and it asks someone
    /// else).
    fn send_snapshot(&mut self, tick: Tick) {
        let Some(world) = self.game.world_at(tick) else {
            tracing::debug!(%tick, "snapshot asked for a tick no longer held");
            return;
        };
        let mut world = world.into_owned();
        if self.options.corrupt_snapshot {
            world.nudge();
        }
        match encode(&world, MAX_SNAPSHOT_SIZE as usize) {
            Ok(bytes) => self.command(NetCommand::Snapshot(tick, bytes)),
            Err(e) => self.say(Notice::SnapshotNotSent {
                tick,
                why: e.to_string(),
            }),
        }
    }

    /// The player now holds `input` (the driver says so at every event
    /// pump): the connection gives it to the ticks that fall due before
    /// the next frame samples them.
    pub fn hold(&mut self, input: Input) {
        if let Some(held) = &mut self.held {
            if *held != input {
                *held = input;
                self.last_input = input;
                self.command(NetCommand::Hold(input));
            }
        }
    }

    /// Says what is still unsaid, whatever the time: the game ends.
    pub fn wrap_up(&mut self) {
        if let Some(line) = self.replacements.flush() {
            self.say(Notice::Lag(line));
        }
    }

    /// What the game said since the last call.
    pub fn outbox(&mut self) -> Outbox {
        std::mem::take(&mut self.outbox)
    }

    fn command(&mut self, command: NetCommand) {
        self.outbox.commands.push(command);
    }

    fn say(&mut self, notice: Notice) {
        self.outbox.notices.push(notice);
    }

    /// The simulation, its gate and its clock.
    pub fn game(&self) -> &NetGame<G> {
        &self.game
    }

    /// The game, for whoever keeps its last world.
    pub fn into_game(self) -> NetGame<G> {
        self.game
    }

    /// The link's last statistics.
    pub fn link(&self) -> LinkStats {
        self.link
    }

    /// The server's last lag indicator.
    pub fn peers(&self) -> Option<&PeerStatus> {
        self.peers.as_ref()
    }

    /// The last desync announcement, for a banner.
    pub fn desync(&self) -> Option<&str> {
        self.desync.as_deref()
    }

    /// Whether the server is lost and the connection reconnects.
    pub fn is_reconnecting(&self) -> bool {
        self.reconnecting
    }

    /// Whether `ticks` was reached: leave now.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The input last sent or held.
    pub fn last_input(&self) -> Input {
        self.last_input
    }

    /// The alpha the last frame ended at, to draw between the last two
    /// ticks.
    pub fn alpha(&self) -> f32 {
        self.alpha
    }

    /// How early our inputs reach the server, as its last lag report says.
    fn own_slack(&self) -> Option<Slack> {
        self.own_peer()?.slack
    }

    /// The round trip the server measures to us, for the link's figures
    /// where the transport does not tell its own (a WebSocket).
    pub fn server_rtt(&self) -> Option<Duration> {
        let peer = self.own_peer()?;
        Some(Duration::from_millis(u64::from(peer.ping_ms)))
    }

    fn own_peer(&self) -> Option<&lockstep_protocol::Peer> {
        let me: PlayerId = self.game.me?;
        self.peers.as_ref()?.peers.iter().find(|p| p.player == me)
    }

    /// What a banner says about the connection: that the server is lost
    /// and the game waits for it, or how far a catch-up has come.
    pub fn connection_banner(&self) -> Option<String> {
        if self.reconnecting {
            return Some("Server lost, reconnecting".into());
        }
        let (done, total) = self.game.catching_up()?;
        Some(match self.resumed_at {
            Some(_) if done + 1 >= total => "Reconnected, waiting for the other players".into(),
            Some(_) => format!("Reconnected, catching up: tick {done} of {total}"),
            None => format!("Catching up: tick {done} of {total}"),
        })
    }

    /// The HUD's note at `now` that the server stood in for our inputs
    /// lately.
    pub fn replaced_note(&self, now: Duration) -> Option<String> {
        self.replacements
            .note(now, self.game.stats().replaced_inputs)
    }

    /// The lag indicator at `now`, in words: whom the game has been
    /// waiting for, once it has waited long enough to be worth saying.
    pub fn waiting_for(&self, now: Duration) -> Option<String> {
        if self.reconnecting {
            // The last lag report is from the server that is gone.
            return Some("waiting for the server to come back".into());
        }
        let since = self.waiting_since?;
        if now.saturating_sub(since) < waiting::SHOWN_AFTER {
            return None;
        }
        let status = self.peers.as_ref()?;
        Some(waiting::line(status, self.game.me, |p| {
            self.game.names(&[p]).join("")
        }))
    }
}

/// What a Start (and its snapshot, if any) begins.
struct Joined<G: HasBots> {
    game: NetGame<G>,
    /// The tick of the snapshot the game starts from.
    from: Option<Tick>,
    /// The snapshot's tick and why it is not the majority's world: then
    /// `game` is the game at tick 0, which stands still (its bundles do
    /// not come) until the server's next Start.
    refused: Option<(Tick, String)>,
}

fn join<G: HasBots>(started: &Started, options: GameOptions) -> Result<Joined<G>, JoinError> {
    let start = &started.start;
    let Some(bytes) = &started.snapshot else {
        return Ok(Joined {
            game: NetGame::new(start, options)?,
            from: None,
            refused: None,
        });
    };
    let tick = start.snapshot.unwrap_or_default();
    Ok(match NetGame::<G>::snapshot_world(start, bytes) {
        Ok(world) => Joined {
            game: NetGame::from_world(start, options, world),
            from: Some(tick),
            refused: None,
        },
        Err(why) => Joined {
            game: NetGame::new(start, options)?,
            from: None,
            refused: Some((tick, why)),
        },
    })
}

#[cfg(test)]
mod tests;
