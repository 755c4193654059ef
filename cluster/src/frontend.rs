//! The smallest frontend that plays a networked game the way
//! `lockstep_client::play` does, headless and on simulated time: it takes
//! the connection's events, runs the ticks the game's clock says are due,
//! lets a bot choose the player's inputs, reports hashes, answers snapshot
//! requests and desync notices, and ends the game at its last tick.
//!
//! It answers with the [`NetCommand`]s for the connection instead of
//! sending them, and with lines for the event log. Left out, because they
//! measure the real machine: the capacity reports (so speed control never
//! slows a cluster down), recordings, dumps and the HUD.

use std::time::Duration;

use lockstep_client::link::connection::{Closed, LinkStats, NetCommand, NetEvent};
use lockstep_engine::lockstep::net_game::{Advance, GameOptions, NetGame};
use lockstep_engine::HasBots;
use lockstep_protocol::{decode, encode, PeerStatus, Slack, Start, Tick, MAX_SNAPSHOT_SIZE};

/// A frame this long after the last means the machine stopped (as
/// `lockstep_client::play` judges it).
const HICCUP: Duration = Duration::from_millis(150);

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
    /// The running game, with its bot.
    game: Option<(NetGame<G>, Option<G::Bot>)>,
    /// When the previous frame ran.
    last_frame: Duration,
    /// When the next frame runs, as a headless client sleeps: when the
    /// next tick is due, or when an event wakes it.
    wake: Duration,
    /// The tick the game waits for, while it stalls.
    stalled_on: Option<Tick>,
    /// Whether the last tick simulated had our input stood in for.
    replaced: bool,
    /// Said GameDone; say Ready at the next lobby.
    rematch: bool,
    link: LinkStats,
    peers: Option<PeerStatus>,
    /// Over: the connection closed.
    pub(crate) closed: bool,
    /// The world's tick and hash when the last game ended at `ticks`.
    pub(crate) last_final: Option<(Tick, u64)>,
}

impl<G: HasBots> Frontend<G> {
    pub(crate) fn new(options: GameOptions, bot_seed: u64, ticks: Option<u32>, games: u32) -> Self {
        Frontend {
            options,
            bot_seed,
            ticks,
            games: games.max(1),
            game: None,
            last_frame: Duration::ZERO,
            wake: Duration::ZERO,
            stalled_on: None,
            replaced: false,
            rematch: false,
            link: LinkStats::default(),
            peers: None,
            closed: false,
            last_final: None,
        }
    }

    /// The running game, if any.
    pub(crate) fn game(&self) -> Option<&NetGame<G>> {
        self.game.as_ref().map(|(game, _)| game)
    }

    /// Takes one event of the connection; `at` converts the instants it
    /// carries into simulated time.
    pub(crate) fn handle(
        &mut self,
        event: NetEvent,
        at: impl Fn(std::time::Instant) -> Duration,
    ) -> Out {
        let mut out = Out::default();
        self.wake = Duration::ZERO;
        match event {
            NetEvent::Welcome { player, .. } => out.say(format!("welcome player={player}")),
            NetEvent::Lobby(_) if self.rematch => {
                self.rematch = false;
                out.commands.push(NetCommand::Ready(true));
                out.say("ready".into());
            }
            NetEvent::Lobby(_) => {}
            NetEvent::Stats(stats) => self.link = stats,
            NetEvent::Peers(status) => self.peers = Some(status),
            NetEvent::Started(started) => {
                self.start(&started.start, at(started.at), started.snapshot, &mut out)
            }
            NetEvent::Resumed { start, .. } => {
                if let Some((game, _)) = &mut self.game {
                    let tick = game.current.tick();
                    game.resume(&start);
                    out.commands.extend(
                        game.initial_inputs()
                            .into_iter()
                            .map(|(t, i)| NetCommand::Input(t, i)),
                    );
                    out.say(format!("resumed tick={tick} from={}", start.history));
                }
            }
            NetEvent::Bundles {
                first_tick,
                bundles,
            } => {
                if let Some((game, _)) = &mut self.game {
                    game.receive(first_tick, bundles);
                }
            }
            NetEvent::Desync(notice) => {
                let diverged: Vec<String> = notice.diverged.iter().map(|p| p.to_string()).collect();
                out.say(format!(
                    "desync tick={} diverged={}",
                    notice.tick,
                    diverged.join(",")
                ));
                if let Some((game, _)) = &self.game {
                    if let Some((first_tick, hashes)) = game.tick_hashes(&notice) {
                        out.commands
                            .push(NetCommand::TickHashes(notice.tick, first_tick, hashes));
                    }
                }
            }
            NetEvent::Pinpointed { tick, first } => {
                out.say(format!("pinpointed tick={tick} first={first}"));
            }
            NetEvent::Speed {
                from_tick,
                percent,
                postpone,
            } => {
                if let Some((game, _)) = &mut self.game {
                    game.set_speed(from_tick, percent, postpone);
                }
                out.say(format!("speed percent={} from_tick={from_tick}", percent.0));
            }
            NetEvent::SnapshotRequest(tick) => self.send_snapshot(tick, &mut out),
            NetEvent::Reconnecting { reason, .. } => out.say(format!("reconnecting {reason}")),
            NetEvent::Closed(closed) => {
                self.closed = true;
                let line = match closed {
                    Closed::Left => "closed left".to_string(),
                    Closed::Refused(why) => format!("closed refused {why}"),
                    Closed::Ended(why) => format!("closed ended {why}"),
                    Closed::Lost(why) => format!("closed lost {why}"),
                };
                out.say(line);
            }
        }
        out
    }

    /// Starts the game of `start`, from tick 0 or from the snapshot's
    /// bytes, as a join or a rejoin does.
    fn start(&mut self, start: &Start, at: Duration, snapshot: Option<Vec<u8>>, out: &mut Out) {
        let game = match snapshot {
            Some(bytes) => match decode::<G>(&bytes, MAX_SNAPSHOT_SIZE as usize) {
                Ok(world) if Some(world.tick()) == start.snapshot => {
                    Ok(NetGame::from_world(start, self.options, world))
                }
                Ok(world) => Err(format!("a snapshot of tick {}", world.tick())),
                Err(e) => Err(e.to_string()),
            },
            None => NetGame::new(start, self.options).map_err(|e| e.to_string()),
        };
        let game = match game {
            Ok(game) => game,
            Err(why) => {
                out.say(format!("unplayable start: {why}"));
                out.commands.push(NetCommand::Leave);
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
        out.commands.extend(
            game.initial_inputs()
                .into_iter()
                .map(|(t, i)| NetCommand::Input(t, i)),
        );
        let bot = game.me.map(|me| G::bot(self.bot_seed, me));
        self.game = Some((game, bot));
        self.last_frame = at;
        self.stalled_on = None;
    }

    /// Sends the server our world after `tick`, if the history still
    /// holds it.
    fn send_snapshot(&mut self, tick: Tick, out: &mut Out) {
        let Some(world) = self.game().and_then(|game| game.world_at(tick)) else {
            out.say(format!("snapshot unavailable tick={tick}"));
            return;
        };
        match encode(&*world, MAX_SNAPSHOT_SIZE as usize) {
            Ok(bytes) => {
                out.commands.push(NetCommand::Snapshot(tick, bytes));
                out.say(format!("snapshot sent tick={tick}"));
            }
            Err(e) => out.say(format!("snapshot unencodable tick={tick}: {e}")),
        }
    }

    /// One frame at `now`, if the frontend is awake: every tick due runs (flipcode's inner loop), the
    /// bot's input goes out for every tick that needs one, and the game
    /// ends at its last tick.
    pub(crate) fn frame(&mut self, now: Duration) -> Out {
        let mut out = Out::default();
        if now < self.wake {
            return out;
        }
        let own_slack = self.own_slack();
        let Some((game, bot)) = &mut self.game else {
            return out;
        };
        let elapsed = now.saturating_sub(self.last_frame);
        self.last_frame = now;
        game.begin_frame(elapsed.as_nanos() as u64);
        if elapsed >= HICCUP {
            game.hiccup();
        }
        let mut finished = false;
        loop {
            match game.advance() {
                Advance::Ran {
                    tick,
                    report,
                    replaced,
                } => {
                    if self.stalled_on.take().is_some() {
                        out.say(format!("stall over tick={tick}"));
                    }
                    match (replaced, self.replaced) {
                        (Some(at), false) => out.say(format!("stood in for tick={at}")),
                        (None, true) => out.say(format!("own input again tick={tick}")),
                        _ => {}
                    }
                    self.replaced = replaced.is_some();
                    if let Some((tick, hash)) = report {
                        out.commands.push(NetCommand::Report(tick, hash));
                    }
                    game.adapt_delay(self.link.figures(), own_slack);
                    let due = game.local_ticks_due();
                    send_local(game, bot, due, &mut out);
                    if self.ticks.is_some_and(|t| tick.0 >= t) {
                        finished = true;
                        break;
                    }
                }
                Advance::Stalled(tick) => {
                    if self.stalled_on.is_none() {
                        out.say(format!("stalled tick={tick}"));
                    }
                    self.stalled_on = Some(tick);
                    let due = game.local_ticks_due_while_stalled();
                    send_local(game, bot, due, &mut out);
                    break;
                }
                Advance::NotDue => break,
            }
        }
        game.end_frame();
        self.wake = match self.stalled_on {
            Some(_) => now + STALL_WAIT,
            None => now + Duration::from_nanos(game.until_due_ns()),
        };
        if finished {
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

    /// How early our inputs reach the server, as its last lag report says.
    fn own_slack(&self) -> Option<Slack> {
        let me = self.game()?.me?;
        let status = self.peers.as_ref()?;
        status.peers.iter().find(|p| p.player == me)?.slack
    }
}

/// The bot's input, for every tick of `due`.
fn send_local<G: HasBots>(
    game: &NetGame<G>,
    bot: &mut Option<G::Bot>,
    due: std::ops::Range<Tick>,
    out: &mut Out,
) {
    let (Some(bot), Some(me)) = (bot, game.me) else {
        return;
    };
    if due.is_empty() {
        return;
    }
    let input = game.current.bot_input(bot, me);
    for t in due.start.0..due.end.0 {
        out.commands.push(NetCommand::Input(Tick(t), input));
    }
}
