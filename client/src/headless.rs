//! The client without a window: same network, gate and loop, no drawing.
//! Used for bots, tests and benchmarks.

use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use lockstep_protocol::{Input, Start};

use crate::clock;
use crate::net::{NetClient, NetEvent};
use crate::play::{NetPlay, PlayOptions};
use crate::{GameOutcome, PlayError};

/// How long a stalled headless client sleeps at most before looking again;
/// the bundle it waits for wakes it earlier.
const STALL_WAIT: Duration = Duration::from_millis(50);

/// Waits in the lobby until the game starts.
fn wait_for_start(net: &NetClient) -> Result<(Start, Instant), PlayError> {
    loop {
        match net.events().recv() {
            Ok(NetEvent::Started { start, at }) => return Ok((start, at)),
            Ok(NetEvent::Welcome { first_use, .. }) => crate::announce_first_use(&first_use),
            Ok(NetEvent::Closed(closed)) => return Err(PlayError::from(closed)),
            Ok(_) => {}
            Err(_) => return Err(PlayError::Lost("the network thread stopped".into())),
        }
    }
}

/// Plays until `options.ticks`, or until the connection ends.
pub fn run(net: NetClient, options: PlayOptions) -> Result<GameOutcome, PlayError> {
    let (start, at) = wait_for_start(&net)?;
    let mut play = NetPlay::start(net, &start, at, options);
    loop {
        // IndependentTickRun: take what the network delivered.
        play.drain()?;
        let frame = play.run_ticks(clock::now(), Input::default);
        if frame.finished {
            return Ok(play.finish(None));
        }
        if !play.game.is_playing() {
            return Err(PlayError::Dropped);
        }
        // Sleep until the next tick is due, or until the network wakes us
        // because the bundle we stall on arrived.
        let wait = if frame.stalled {
            STALL_WAIT
        } else {
            Duration::from_nanos(play.game.until_due_ns())
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
