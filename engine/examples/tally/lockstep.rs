//! Two Tally clients in lockstep over an in-memory relay, on a simulated
//! clock: the engine's gate, accumulator and input delay exactly as the
//! real client runs them, with the network replaced by a queue that
//! delivers each bundle `latency` frames after it is complete.

use std::collections::{BTreeMap, VecDeque};

use lockstep_engine::lockstep::net_game::{Advance, GameOptions, NetGame};
use lockstep_engine::Game;
use lockstep_protocol::{Bundle, Buttons, Input, PlayerId, PlayerInput, RosterEntry, Start, Tick};

use crate::game::Tally;

/// Nanoseconds per simulated frame: 60 frames a second.
const FRAME_NS: u64 = 16_666_667;

/// How a run went.
#[derive(Debug)]
pub struct Outcome {
    /// Both clients at the end.
    pub clients: Vec<NetGame<Tally>>,
    /// Every bundle the relay made, in tick order.
    pub bundles: Vec<Bundle>,
}

/// What a player presses at `tick`: a pattern that differs per player.
fn input(player: PlayerId, tick: Tick) -> Input {
    Input {
        buttons: Buttons((tick.0 as u8).wrapping_mul(player.0 + 3) & Buttons::BOOST.0),
        axes: None,
    }
}

/// Hands the relay `player`'s input for `tick`.
fn send(inputs: &mut BTreeMap<Tick, Vec<PlayerInput>>, player: PlayerId, tick: Tick, input: Input) {
    inputs
        .entry(tick)
        .or_default()
        .push(PlayerInput { player, input });
}

/// Plays `ticks` ticks with two players, an input delay of `delay` ticks
/// and bundles arriving `latency` frames after they are complete.
pub fn play(ticks: u32, delay: u8, latency: usize) -> Outcome {
    let roster: Vec<RosterEntry> = (0..2)
        .map(|id| RosterEntry {
            id: PlayerId(id),
            name: format!("p{id}"),
        })
        .collect();
    let options = GameOptions {
        pinned_delay: Some(delay),
        ..GameOptions::default()
    };
    let mut clients: Vec<NetGame<Tally>> = roster
        .iter()
        .map(|me| {
            let start = Start {
                seed: 7,
                tick_rate: 60,
                input_delay: delay,
                spec: lockstep_engine::spec_of::<Tally>(&()),
                roster: roster.clone(),
                hash_interval: 15,
                you: Some(me.id),
                first_input_tick: Tick(0),
                history: 0,
                snapshot: None,
                snapshot_hash: None,
                resume: None,
            };
            NetGame::new(&start, options).expect("a Start of the Tally game")
        })
        .collect();
    // The relay: inputs by tick, then complete bundles in flight.
    let mut inputs: BTreeMap<Tick, Vec<PlayerInput>> = BTreeMap::new();
    let mut bundles: Vec<Bundle> = Vec::new();
    let mut in_flight: VecDeque<(usize, Tick, Bundle)> = VecDeque::new();
    for client in &clients {
        let me = client.me.unwrap_or_default();
        for (tick, input) in client.initial_inputs() {
            send(&mut inputs, me, tick, input);
        }
    }
    let mut frame = 0;
    while clients.iter().any(|c| c.current.tick().0 < ticks) {
        frame += 1;
        // The relay bundles every tick both players have sent.
        while let Some(mut complete) = inputs
            .first_entry()
            .filter(|e| e.key().0 as usize == bundles.len() && e.get().len() == 2)
        {
            complete.get_mut().sort_by_key(|i| i.player);
            let bundle = Bundle {
                inputs: complete.remove(),
                ..Bundle::default()
            };
            in_flight.push_back((frame + latency, Tick(bundles.len() as u32), bundle.clone()));
            bundles.push(bundle);
        }
        while in_flight.front().is_some_and(|(due, _, _)| *due <= frame) {
            if let Some((_, tick, bundle)) = in_flight.pop_front() {
                for client in &mut clients {
                    client.receive(tick, vec![bundle.clone()]);
                }
            }
        }
        // Each client runs flipcode's loop for one frame.
        for client in &mut clients {
            let me = client.me.unwrap_or_default();
            client.begin_frame(FRAME_NS);
            while let Advance::Ran { tick, .. } = client.advance() {
                let due = client.local_ticks_due();
                for t in due.start.0..due.end.0 {
                    send(&mut inputs, me, Tick(t), input(me, tick));
                }
                if tick.0 >= ticks {
                    break;
                }
            }
            client.end_frame();
        }
    }
    Outcome { clients, bundles }
}
