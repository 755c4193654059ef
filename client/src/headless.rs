//! The client without a window: same network, gate and loop, no drawing.
//! Used for bots, tests and benchmarks.

use std::time::Duration;

use lockstep_protocol::{Input, Start};

use crate::bot::Bot;
use crate::clock;
use crate::game::{NetGame, Step};
use crate::net::{Closed, LinkStats, NetClient, NetEvent};
use crate::{GameOutcome, PlayError};

/// What the headless client plays.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeadlessOptions {
    /// Play seeded pseudo-random inputs; `None` sends neutral inputs.
    pub bot: Option<u64>,
    /// Leave once this many ticks have been simulated.
    pub ticks: Option<u32>,
}

/// Waits in the lobby until the game starts.
fn wait_for_start(net: &NetClient) -> Result<(Start, std::time::Instant), PlayError> {
    loop {
        match net.events().recv() {
            Ok(NetEvent::Started { start, at }) => return Ok((start, at)),
            Ok(NetEvent::Welcome {
                unpinned_fingerprint,
                ..
            }) => crate::warn_if_unpinned(&unpinned_fingerprint),
            Ok(NetEvent::Closed(closed)) => return Err(PlayError::from(closed)),
            Ok(_) => {}
            Err(_) => return Err(PlayError::Lost("the network thread stopped".into())),
        }
    }
}

/// Plays until `options.ticks`, or until the connection ends.
pub fn run(mut net: NetClient, options: HeadlessOptions) -> Result<GameOutcome, PlayError> {
    let (start, started_at) = wait_for_start(&net)?;
    let mut game = NetGame::new(&start);
    for (tick, input) in game.initial_inputs() {
        net.send_input(tick, input);
    }
    let mut bot = options.bot.map(|seed| Bot::for_player(seed, game.me));
    let mut link = LinkStats::default();
    let mut last = started_at;
    loop {
        // IndependentTickRun: take what the network delivered.
        while let Ok(event) = net.events().try_recv() {
            match event {
                NetEvent::Bundles {
                    first_tick,
                    bundles,
                } => game.receive(first_tick, bundles),
                NetEvent::Stats(stats) => link = stats,
                NetEvent::Closed(closed) => return Err(PlayError::from(closed)),
                NetEvent::Welcome { .. } | NetEvent::Started { .. } => {}
            }
        }
        let now = clock::now();
        game.begin_frame(now.duration_since(last).as_nanos() as u64);
        last = now;
        let mut stalled = false;
        loop {
            match game.step() {
                Step::Ran(_) => {
                    let input = match &mut bot {
                        Some(bot) => bot.next_input(&game.current, game.me),
                        None => Input::default(),
                    };
                    net.send_input(game.schedule_local(), input);
                    if options.ticks.is_some_and(|t| game.current.tick().0 >= t) {
                        net.leave();
                        return Ok(GameOutcome::new(&game, link));
                    }
                }
                Step::Stalled(_) => {
                    stalled = true;
                    break;
                }
                Step::NotDue => break,
            }
        }
        game.end_frame();
        if !game.is_playing() {
            return Err(PlayError::Dropped);
        }
        // Sleep until the next tick is due, or until the network wakes us
        // because the bundle we stall on arrived.
        let wait = if stalled {
            Duration::from_millis(50)
        } else {
            Duration::from_nanos(game.until_due_ns())
        };
        match net.events().recv_timeout(wait) {
            Ok(NetEvent::Bundles {
                first_tick,
                bundles,
            }) => game.receive(first_tick, bundles),
            Ok(NetEvent::Stats(stats)) => link = stats,
            Ok(NetEvent::Closed(closed)) => return Err(PlayError::from(closed)),
            Ok(_) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(PlayError::from(Closed::Lost(
                    "the network thread stopped".into(),
                )))
            }
        }
    }
}
