//! A networked game in progress, as both frontends drive it: the network
//! client, the [`NetGame`], the local bot if any, and what to do with the
//! server's events (bundles, statistics, desync notices, the end).

use std::path::PathBuf;
use std::time::Instant;

use lockstep_protocol::{DesyncNotice, Input, Start};

use crate::bot::Bot;
use crate::fixed_step::FrameEnd;
use crate::game::{GameOptions, NetGame, Step};
use crate::net::{LinkStats, NetClient, NetEvent};
use crate::replay::ClientRecorder;
use crate::{GameOutcome, PlayError};

/// What the player asked for beyond the server's Start.
#[derive(Debug, Clone)]
pub struct PlayOptions {
    /// Play seeded pseudo-random inputs; `None` uses the frontend's input.
    pub bot: Option<u64>,
    /// Leave once the world reaches this tick.
    pub ticks: Option<u32>,
    /// Where desync dumps are written.
    pub dump_dir: PathBuf,
    /// Snapshots kept and fault injection.
    pub game: GameOptions,
    /// Record the game to this replay file.
    pub record: Option<PathBuf>,
}

/// What one frame of ticks did.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    /// Ticks simulated.
    pub steps: u32,
    /// Whether a due tick had to wait for its bundle.
    pub stalled: bool,
    /// The fixed-step loop's verdict (alpha for drawing).
    pub end: FrameEnd,
    /// Whether `ticks` was reached: leave now.
    pub finished: bool,
}

/// A networked game in progress.
#[derive(Debug)]
pub struct NetPlay {
    /// The connection.
    pub net: NetClient,
    /// Simulation, gate and clock.
    pub game: NetGame,
    /// Last link statistics.
    pub link: LinkStats,
    /// The last desync announcement, for the HUD.
    pub desync: Option<String>,
    bot: Option<Bot>,
    recorder: Option<ClientRecorder>,
    options: PlayOptions,
    last_frame: Instant,
}

impl NetPlay {
    /// Starts the game the server announced; `at` is when Start arrived,
    /// the zero of this client's game clock.
    pub fn start(net: NetClient, start: &Start, at: Instant, options: PlayOptions) -> NetPlay {
        let game = NetGame::new(start, options.game);
        for (tick, input) in game.initial_inputs() {
            net.send_input(tick, input);
        }
        let recorder = options.record.as_ref().and_then(|path| {
            let name = game.names(&[game.me]).join("");
            let header = ClientRecorder::header_for(start, &format!("client {name}"));
            ClientRecorder::create(path, &header, game.me)
                .map_err(|e| eprintln!("lockstep-client: not recording: {e}"))
                .ok()
        });
        NetPlay {
            recorder,
            bot: options.bot.map(|seed| Bot::for_player(seed, game.me)),
            net,
            game,
            link: LinkStats::default(),
            desync: None,
            options,
            last_frame: at,
        }
    }

    /// Applies one network event; the end of the connection is an error.
    pub fn handle(&mut self, event: NetEvent) -> Result<(), PlayError> {
        match event {
            NetEvent::Bundles {
                first_tick,
                bundles,
            } => self.game.receive(first_tick, bundles),
            NetEvent::Stats(stats) => self.link = stats,
            NetEvent::Desync(notice) => self.on_desync(&notice),
            NetEvent::Closed(closed) => return Err(PlayError::from(closed)),
            NetEvent::Welcome { .. } | NetEvent::Started { .. } => {}
        }
        Ok(())
    }

    /// Applies every event that has arrived.
    pub fn drain(&mut self) -> Result<(), PlayError> {
        while let Ok(event) = self.net.events().try_recv() {
            self.handle(event)?;
        }
        Ok(())
    }

    /// Runs the ticks due at `now`: seed 001's inner loop. `sample` gives
    /// the frontend's input when no bot plays.
    pub fn run_ticks(&mut self, now: Instant, mut sample: impl FnMut() -> Input) -> Frame {
        self.game
            .begin_frame(now.saturating_duration_since(self.last_frame).as_nanos() as u64);
        self.last_frame = now;
        let mut steps = 0;
        let mut stalled = false;
        let mut finished = false;
        loop {
            match self.game.step() {
                Step::Ran { tick, report } => {
                    steps += 1;
                    if let (Some(recorder), Some(bundle)) =
                        (&mut self.recorder, self.game.last_bundle())
                    {
                        recorder.tick(bundle, &self.game.current);
                    }
                    if let Some((tick, hash)) = report {
                        self.net.report_hash(tick, hash);
                    }
                    let input = match &mut self.bot {
                        Some(bot) => bot.next_input(&self.game.current, self.game.me),
                        None => sample(),
                    };
                    self.net.send_input(self.game.schedule_local(), input);
                    if self.options.ticks.is_some_and(|t| tick.0 >= t) {
                        finished = true;
                        break;
                    }
                }
                Step::Stalled(_) => {
                    stalled = true;
                    break;
                }
                Step::NotDue => break,
            }
        }
        Frame {
            steps,
            stalled,
            end: self.game.end_frame(),
            finished,
        }
    }

    /// Leaves the game and reports how it ended.
    pub fn finish(mut self) -> GameOutcome {
        self.net.leave();
        if let Some(recorder) = self.recorder.take() {
            recorder.finish("the player left");
        }
        GameOutcome::new(&self.game, self.link)
    }

    /// Announces a desync on stderr and the HUD, and writes this client's
    /// dump of the diverged tick.
    fn on_desync(&mut self, notice: &DesyncNotice) {
        let names = self.game.names(&notice.diverged).join(", ");
        let mut message = format!("desync at tick {}: {names} diverged", notice.tick);
        match self.game.desync_dump(notice) {
            Some(dump) => match dump.write(&self.options.dump_dir) {
                Ok((json, bin)) => message.push_str(&format!(
                    "; dump written to {} and {}",
                    json.display(),
                    bin.display()
                )),
                Err(e) => message.push_str(&format!("; dump not written: {e}")),
            },
            None => message.push_str(&format!(
                "; tick {} is no longer in the history, no dump written",
                notice.tick
            )),
        }
        eprintln!("lockstep-client: {message}");
        self.desync = Some(format!("DESYNC at tick {}: {names} diverged", notice.tick));
    }
}
