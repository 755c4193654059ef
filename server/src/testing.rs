//! The game the library's unit tests host. The server treats every game
//! alike and names none, so its tests bring their own: a sum of the
//! players' buttons, with seeded bots.

use lockstep_engine::{Game, HasBots, Hosted, HostedGame, Setup};
use lockstep_protocol::{Buttons, Input, PlayerId, PlayerInput, Tick};
use serde::{Deserialize, Serialize};

/// The hosted test game.
pub(crate) const TEST_GAME: &dyn HostedGame = &Hosted::<Sum>::new();

/// The whole state: a running sum of every button pressed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Sum {
    tick: Tick,
    seed: u64,
    players: Vec<PlayerId>,
    sum: u64,
}

impl Game for Sum {
    const NAME: &'static str = "sum";
    type Settings = ();

    fn start(setup: &Setup<()>) -> Sum {
        Sum {
            tick: Tick(0),
            seed: setup.seed,
            players: setup.players.clone(),
            sum: 0,
        }
    }

    fn step(&mut self, inputs: &[PlayerInput]) {
        for input in inputs {
            self.sum = self.sum.wrapping_add(u64::from(input.input.buttons.0));
        }
        self.tick = self.tick.next();
    }

    fn tick(&self) -> Tick {
        self.tick
    }

    fn hash(&self) -> u64 {
        let mixed = self.sum ^ self.seed.rotate_left(17) ^ u64::from(self.tick.0) << 40;
        mixed.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

impl HasBots for Sum {
    const ABOUT: &'static str = "a sum of every input, for the server's tests";
    type Bot = u8;

    fn bot(_seed: u64, player: PlayerId) -> u8 {
        player.0
    }

    fn bot_input(&self, bot: &mut u8, _me: PlayerId) -> Input {
        *bot = bot.wrapping_add(1);
        Input {
            buttons: Buttons(*bot & 0x1f),
            axes: None,
        }
    }
}

/// A state of the test game after `ticks` ticks of `players` holding the
/// button bits of their id.
pub(crate) fn played(players: &[PlayerId], ticks: u32) -> Sum {
    let mut game = Sum::start(&Setup {
        seed: 5,
        tick_rate: 60,
        settings: (),
        players: players.to_vec(),
    });
    for _ in 0..ticks {
        let inputs: Vec<PlayerInput> = players
            .iter()
            .map(|&player| PlayerInput {
                player,
                input: Input {
                    buttons: Buttons(player.0),
                    axes: None,
                },
            })
            .collect();
        game.step(&inputs);
    }
    game
}
