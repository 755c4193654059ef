//! The client without a window: same network, gate and loop, no drawing.
//! Used for bots, tests and benchmarks.
//!
//! With `--games N` it plays N games back to back on one connection: at
//! `--ticks` of every game but the last it says GameDone instead of Leave,
//! waits in the lobby until the game is over for everyone, says it is
//! ready for the next, and plays that one from its Start.

use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use lockstep_protocol::Input;

use super::{GameOutcome, PlayError};
use crate::games::{ForGame, Games, Playable};
use crate::io::clock;
use crate::io::link::{NetClient, NetCommand, NetEvent, Started};
use crate::play::notice::{Notice, Notices};
use crate::play::{NetPlay, PlayOptions};

/// How long a stalled headless client sleeps at most before looking again;
/// the bundle it waits for wakes it earlier.
const STALL_WAIT: Duration = Duration::from_millis(50);

/// How often a client waiting in the lobby looks whether SIGTERM or
/// SIGINT asked it to leave.
const LOBBY_LOOK: Duration = Duration::from_millis(100);

/// Waits in the lobby until the game starts. After a game (`rematch`),
/// the first lobby the server sends is the one after that game ended for
/// everyone: the client says it is ready then (the server ignores it
/// while a game runs, and makes everyone not ready when one ends).
/// SIGTERM or SIGINT leaves the lobby with a goodbye, as they leave a
/// game. A game whose settings `games` refuses (a host without the game
/// gives them as `KEY=VALUE` pairs) is left with the reason, which the
/// server passes on.
fn wait_for_start(
    games: &impl Games,
    net: &mut NetClient,
    rematch: bool,
    notices: &Notices,
) -> Result<Started, PlayError> {
    let mut said_ready = !rematch;
    let mut refused = false;
    loop {
        if crate::io::stop::requested() {
            net.leave();
            return Err(PlayError::Stopped);
        }
        match net.events().recv_timeout(LOBBY_LOOK) {
            Ok(NetEvent::Started(started)) => return Ok(started),
            Ok(NetEvent::Welcome {
                first_use: Some(first_use),
                ..
            }) => notices.say(Notice::FirstUse(first_use)),
            Ok(NetEvent::Lobby(lobby)) if !refused => {
                if let Some(why) = games.refuses(&lobby.next.spec) {
                    net.send(NetCommand::CannotPlay(why));
                    refused = true;
                } else if !said_ready {
                    net.send(NetCommand::Ready(true));
                    said_ready = true;
                }
            }
            Ok(NetEvent::Lobby(_)) if !said_ready && !refused => {
                net.send(NetCommand::Ready(true));
                said_ready = true;
            }
            Ok(NetEvent::Closed(closed)) => return Err(PlayError::from(closed)),
            Ok(_) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Err(PlayError::Lost("the network thread stopped".into()))
            }
        }
    }
}

/// The headless frontend: it plays whichever of its games the server
/// hosts, and joins ready.
pub struct Headless<'a, G: Games>(pub &'a G);

impl<G: Games> crate::play::connect::Frontend for Headless<'_, G> {
    fn joins_ready(&self, _: &PlayOptions) -> bool {
        true
    }

    fn play(
        self,
        net: NetClient,
        _name: String,
        play: PlayOptions,
    ) -> anyhow::Result<Vec<GameOutcome>> {
        Ok(run(self.0, net, play)?)
    }
}

/// Plays `options.games` games of whichever of `games` the server hosts,
/// each until `options.ticks`, or until the connection ends; how each
/// game ended, in order.
pub fn run(
    games: &impl Games,
    mut net: NetClient,
    options: PlayOptions,
) -> Result<Vec<GameOutcome>, PlayError> {
    crate::io::stop::install();
    let mut outcomes = Vec::new();
    for game in 1..=options.games.max(1) {
        let started = wait_for_start(games, &mut net, game > 1, &options.notices)?;
        let name = started.start.spec.name.clone();
        let one = OneGame {
            net,
            started,
            options: options.for_game(game),
            last: options.is_last(game),
        };
        let (outcome, next) = games.run(&name, one)??;
        outcomes.push(outcome);
        match next {
            Some(next) => net = next,
            None => break,
        }
    }
    Ok(outcomes)
}

/// One game of a series, played headless whatever the game.
struct OneGame {
    net: NetClient,
    started: Started,
    options: PlayOptions,
    /// The last of the series: leave after it.
    last: bool,
}

impl ForGame for OneGame {
    /// How the game ended, and the connection for the next one unless
    /// this was the last.
    type Output = Result<(GameOutcome, Option<NetClient>), PlayError>;

    fn run<G: Playable>(self) -> Self::Output {
        let play = NetPlay::<G>::start(self.net, self.started, self.options)?;
        let play = play_game(play)?;
        if self.last {
            return Ok((play.finish(None), None));
        }
        let (next, outcome, _) = play.finish_game(None);
        Ok((outcome, Some(next)))
    }
}

/// Plays one game until `ticks` is reached (the game is handed back, for
/// the caller to leave or to wait for the next), or until the connection
/// ends.
fn play_game<G: Playable>(mut play: NetPlay<G>) -> Result<NetPlay<G>, PlayError> {
    loop {
        // IndependentTickRun: take what the network delivered.
        play.drain()?;
        let frame = play.run_ticks(clock::now(), Input::default());
        if frame.finished {
            return Ok(play);
        }
        if crate::io::stop::requested() {
            // A goodbye to the server, and a recording ended whole.
            play.finish(None);
            return Err(PlayError::Stopped);
        }
        if !play.game().is_playing() {
            return Err(PlayError::Dropped);
        }
        // Sleep until the next tick is due, or until the network wakes us
        // because the bundle we stall on arrived.
        let wait = if frame.stalled {
            STALL_WAIT
        } else {
            Duration::from_nanos(play.game().until_due_ns())
        };
        match play.net.events().recv_timeout(wait) {
            Ok(event) => play.handle(event)?,
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Err(PlayError::Lost("the network thread stopped".into()))
            }
        }
    }
}
