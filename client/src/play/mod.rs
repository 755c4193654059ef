//! A networked game in progress, as both native frontends drive it: the
//! driver of the play loop every frontend shares
//! ([`lockstep_link::play`]), around the network client. The loop holds
//! the rules (ticks, inputs on schedule, reports, snapshots, desync
//! answers, resume); this driver carries out what takes real time or a
//! file: it gives the loop the time from this machine's clock, sends its
//! commands to the network thread, times the ticks against the loop's
//! [`TICK_BUDGET`] and for the capacity meter, sleeps `--tick-cost-ms`,
//! records the game, writes desync dumps, and hands the loop's notices to
//! whoever prints them.

pub mod connect;
mod desync;
pub mod headless;
pub mod notice;
mod options;
mod outcome;

use std::time::{Duration, Instant};

use lockstep_engine::lockstep::net_game::NetGame;
use lockstep_engine::replay::recorder::{networked_header, SPECTATOR_REPORTS};
use lockstep_link::play::{JoinError, LoopOptions, Play, Step, TICK_BUDGET};
use lockstep_protocol::Input;

use crate::games::Playable;
use crate::io::clock;
use crate::io::link::{LinkStats, NetClient, NetEvent, Started};
use crate::io::recording::FileRecorder;
use crate::play::notice::Notice;
pub use lockstep_link::play::FrameTicks;
pub use options::PlayOptions;
pub use outcome::{GameOutcome, PlayError};

/// A networked game of `G` in progress.
#[derive(Debug)]
pub struct NetPlay<G: Playable> {
    /// The connection.
    pub net: NetClient,
    /// The play loop.
    play: Play<G>,
    /// What the loop's time counts from: when Start arrived.
    epoch: Instant,
    /// The replay this client writes (`--record`), until it stops.
    recorder: Option<FileRecorder>,
    options: PlayOptions,
    /// Says the notices, writing the dumps they announce first, off the
    /// game thread.
    announcer: desync::Announcer,
}

impl<G: Playable> NetPlay<G> {
    /// Starts the game the server announced; `started.at`, when Start
    /// arrived, is the zero of this client's game clock.
    pub fn start(
        net: NetClient,
        started: Started,
        options: PlayOptions,
    ) -> Result<NetPlay<G>, PlayError> {
        check_fault_phase::<G>(&options)?;
        let epoch = started.at;
        let joined = started.snapshot.is_some();
        let loop_options = LoopOptions {
            bot: options.bot,
            ticks: options.ticks,
            game: options.game,
            inputs_on_frames: options.hooks.inputs_on_frames,
            corrupt_snapshot: options.hooks.corrupt_snapshot,
        };
        let start = started.start.clone();
        let play = Play::<G>::start(started, loop_options, epoch)?;
        let announcer = desync::Announcer::new(options.notices.clone());
        let mut net_play = NetPlay {
            net,
            play,
            epoch,
            recorder: None,
            options,
            announcer,
        };
        net_play.carry_out();
        let joined_from = joined.then(|| net_play.play.game().current.tick());
        net_play.recorder = net_play.open_recorder(&start, joined_from);
        Ok(net_play)
    }

    /// The recorder of a game begun by `start`, if one was asked for: a
    /// replay holds every bundle from tick 0, so a game joined from the
    /// snapshot of `joined_from` records nothing.
    fn open_recorder(
        &self,
        start: &lockstep_protocol::Start,
        joined_from: Option<lockstep_protocol::Tick>,
    ) -> Option<FileRecorder> {
        let path = self.options.record.as_ref()?;
        if let Some(tick) = joined_from {
            self.say(Notice::NotRecordingJoined {
                path: path.clone(),
                tick,
            });
            return None;
        }
        let game = self.play.game();
        let header = networked_header(
            start,
            &format!("client {}", game.name()),
            crate::io::clock::unix_seconds(),
            crate::io::platform::current(),
        );
        let reporter = game.me.unwrap_or(SPECTATOR_REPORTS);
        FileRecorder::create(path, &header, reporter)
            .map_err(|e| self.say(Notice::Recording(format!("not recording: {e}"))))
            .ok()
    }

    /// Applies one network event; the end of the connection is an error.
    pub fn handle(&mut self, event: NetEvent) -> Result<(), PlayError> {
        match event {
            NetEvent::Closed(closed) => return Err(PlayError::from(closed)),
            NetEvent::Started(_) => {
                // Joined afresh after a reconnection: a recording cannot
                // follow, and stops here.
                if let Some(recorder) = self.recorder.take() {
                    self.say(Notice::Recording(
                        "joined the game afresh after reconnecting; recording stops here".into(),
                    ));
                    self.finish_recording(
                        recorder,
                        "the game was joined afresh after a reconnection",
                    );
                }
            }
            _ => {}
        }
        let handled = self.play.handle(event, self.since_epoch(clock::now()));
        self.carry_out();
        handled.map_err(PlayError::from)
    }

    /// Applies every event that has arrived.
    pub fn drain(&mut self) -> Result<(), PlayError> {
        while let Ok(event) = self.net.events().try_recv() {
            self.handle(event)?;
        }
        Ok(())
    }

    /// Runs the ticks due at `now`: flipcode's inner loop, within the
    /// [`TICK_BUDGET`]. `sample` is the frontend's input when no bot
    /// plays. Each tick is recorded, and costs `--tick-cost-ms`; the time
    /// the ticks take goes to the capacity meter.
    pub fn run_ticks(&mut self, now: Instant, sample: Input) -> FrameTicks {
        self.play.begin_frame(self.since_epoch(now), sample);
        let busy_from = clock::now();
        while let Step::Ran { tick } = self.play.step() {
            if let Some(cost) = self.options.hooks.tick_cost.filter(|c| c.applies(tick)) {
                std::thread::sleep(cost.per_tick);
            }
            self.record();
            if clock::since(busy_from) >= TICK_BUDGET {
                break;
            }
        }
        let frame = self.play.end_frame(clock::since(busy_from));
        self.carry_out();
        frame
    }

    /// Records the bundle of the tick that just ran.
    fn record(&mut self) {
        let Some(recorder) = &mut self.recorder else {
            return;
        };
        let game = self.play.game();
        if let Some(bundle) = game.last_bundle() {
            if let Err(stopped) = recorder.tick(bundle, &game.current) {
                self.say(Notice::Recording(stopped));
            }
        }
    }

    /// The player now holds `input` (the frontend calls this at every
    /// event pump): the network thread gives it to ticks that fall due
    /// before the next frame samples them.
    pub fn hold(&mut self, input: Input) {
        self.play.hold(input);
        self.carry_out();
    }

    /// Sends what the loop asked to the network thread, and says its
    /// notices, with the dump a desync asks for written first.
    fn carry_out(&mut self) {
        let said = self.play.outbox();
        for command in said.commands {
            self.net.send(command);
        }
        for notice in said.notices {
            self.say(notice);
        }
    }

    fn since_epoch(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.epoch)
    }

    /// Simulation, gate and clock.
    pub fn game(&self) -> &NetGame<G> {
        self.play.game()
    }

    /// Last link statistics.
    pub fn link(&self) -> LinkStats {
        self.play.link()
    }

    /// The last desync announcement, for the HUD.
    pub fn desync(&self) -> Option<&str> {
        self.play.desync()
    }

    /// Whether the server is lost and the network thread reconnects.
    pub fn is_reconnecting(&self) -> bool {
        self.play.is_reconnecting()
    }

    /// What the window's banner says about the connection: that the
    /// server is lost and the game waits for it, or how far a catch-up
    /// has come.
    pub fn connection_banner(&self) -> Option<String> {
        self.play.connection_banner()
    }

    /// The lag indicator, in words: whom the game has been waiting for, if
    /// it has waited long enough to be worth saying.
    pub fn waiting_for(&self) -> Option<String> {
        self.play.waiting_for(self.since_epoch(clock::now()))
    }

    /// The HUD's note that the server stood in for our inputs lately.
    pub fn replaced_note(&self, now: Instant) -> Option<String> {
        self.play.replaced_note(self.since_epoch(now))
    }

    /// Leaves the game and reports how it ended; `frame` is the
    /// frontend's frame time (`None` headless), for the input lag.
    pub fn finish(mut self, frame: Option<Duration>) -> GameOutcome {
        self.play.wrap_up();
        self.carry_out();
        self.net.leave();
        if let Some(recorder) = self.recorder.take() {
            self.finish_recording(recorder, "the player left");
        }
        GameOutcome::new(self.play.game(), self.play.link(), frame)
    }

    /// Tells the server this player is done with the game but stays for
    /// the next one; hands back the connection, how the game ended and
    /// its last world (for the lobby's scores).
    pub fn finish_game(mut self, frame: Option<Duration>) -> (NetClient, GameOutcome, G) {
        self.play.wrap_up();
        self.carry_out();
        self.net.send(crate::io::link::NetCommand::GameDone);
        if let Some(recorder) = self.recorder.take() {
            self.finish_recording(recorder, "the player finished the game");
        }
        let outcome = GameOutcome::new(self.play.game(), self.play.link(), frame);
        (self.net, outcome, self.play.into_game().current)
    }

    /// Writes the recording's End record, saying so if it cannot.
    fn finish_recording(&self, recorder: FileRecorder, reason: &str) {
        if let Err(problem) = recorder.finish(reason) {
            self.say(Notice::Recording(problem));
        }
    }
}

impl From<JoinError> for PlayError {
    fn from(error: JoinError) -> Self {
        match error {
            JoinError::Setup(e) => PlayError::Game(e),
        }
    }
}

/// Refuses a fault injected in a phase `G` does not have
/// (`--inject-desync-phase` names the phases of every game the client
/// offers).
fn check_fault_phase<G: Playable>(options: &PlayOptions) -> Result<(), PlayError> {
    match options.game.fault.and_then(|fault| fault.phase) {
        Some(phase) if phase != "roster" && !G::PHASES.contains(&phase) => {
            Err(PlayError::Lost(format!(
                "--inject-desync-phase {phase}: the game {} has no such phase; its phases are \
                 roster, {}",
                G::NAME,
                G::PHASES.join(", ")
            )))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
