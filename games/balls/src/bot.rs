//! Seeded bots: stand-ins for human players that are reproducible.
//!
//! A [`Bot`] turns the current [`World`] into one tick of [`Input`]. It keeps
//! its own random generator, so its choices depend only on its seed and the
//! worlds it has seen: an offline run with one bot per player (the engine's
//! `Bots`) is
//! deterministic end to end, and a headless client running
//! [`Bot::for_player`] with the session seed plays exactly like the
//! same player's bot in that offline run, given the same world.
//!
//! The bot follows the simulation's determinism rules (only `+ - * /` and
//! `sqrt`, seeded RNG, index-order iteration) because its inputs feed the
//! simulation in offline runs, whose hashes are compared across machines.

use glam::Vec2;
use lockstep_protocol::{Buttons, Input, PlayerId};

use crate::{Ball, Disc, Rng, World};

/// The eight direction-button combinations a wandering bot picks from.
const DIRECTIONS: [Buttons; 8] = [
    Buttons::UP,
    Buttons(Buttons::UP.0 | Buttons::RIGHT.0),
    Buttons::RIGHT,
    Buttons(Buttons::DOWN.0 | Buttons::RIGHT.0),
    Buttons::DOWN,
    Buttons(Buttons::DOWN.0 | Buttons::LEFT.0),
    Buttons::LEFT,
    Buttons(Buttons::UP.0 | Buttons::LEFT.0),
];

/// How far ahead a chasing bot aims along the ball's path, in seconds:
/// roughly the time a disc needs to get there, so it meets the ball instead
/// of trailing it.
const LEAD_SECONDS: f32 = 0.2;

/// A bot closer to its target than this (in world units) lets go of the
/// stick; aiming at a point it is already on would only jitter.
const ARRIVED: f32 = 1.0;

/// Full deflection of a quantised stick axis.
const AXIS_FULL: f32 = 127.0;

/// What a bot is doing for the next few ticks. Holding a plan for a while,
/// as a person would, makes the bot move in strokes rather than jitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// Drive at the nearest ball from the side away from its nearer goal,
    /// so the hit sends it goalwards. Uses the stick axes.
    Chase {
        /// Whether to hold BOOST while chasing.
        boost: bool,
    },
    /// Hold one direction-button combination (exercises the button path).
    Wander {
        /// The buttons held, including BOOST sometimes.
        buttons: Buttons,
    },
    /// Let go of everything.
    Rest,
}

/// One seeded bot player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bot {
    /// Decides plans and how long to hold them.
    rng: Rng,
    /// The current plan.
    plan: Plan,
    /// Ticks until the next plan is chosen.
    ticks_left: u32,
}

impl Bot {
    /// A bot whose whole behaviour follows from `seed` and the worlds it is
    /// shown.
    #[must_use]
    pub fn new(seed: u64) -> Bot {
        Bot {
            rng: Rng::new(seed),
            plan: Plan::Rest,
            ticks_left: 0,
        }
    }

    /// The bot of `player` in a game seeded with `seed`.
    ///
    /// Its seed is derived (through one SplitMix64 output) from the game
    /// seed and the player id only, not the roster position, so it does not
    /// share a random stream with the world or with other players' bots.
    #[must_use]
    pub fn for_player(seed: u64, player: PlayerId) -> Bot {
        Bot::new(Rng::new(seed.wrapping_add(u64::from(player.0))).next_u64())
    }

    /// This tick's input for player `me` in `world`.
    ///
    /// A player without a disc (removed, or not in the game) gets
    /// `Input::default()` and the bot's state does not advance.
    pub fn next_input(&mut self, world: &World, me: PlayerId) -> Input {
        let Some(disc) = world.discs().iter().find(|disc| disc.player == me) else {
            return Input::default();
        };
        if self.ticks_left == 0 {
            self.plan = self.choose_plan();
            self.ticks_left = self.hold_ticks(world.config().tick_rate);
        }
        self.ticks_left -= 1;
        match self.plan {
            Plan::Chase { boost } => chase(world, disc, boost),
            Plan::Wander { buttons } => Input {
                buttons,
                axes: None,
            },
            Plan::Rest => Input::default(),
        }
    }

    /// Mostly chase (70%), sometimes wander (22%), rarely rest (8%).
    fn choose_plan(&mut self) -> Plan {
        let roll = self.rng.below(100);
        if roll < 70 {
            Plan::Chase {
                boost: self.rng.below(3) == 0,
            }
        } else if roll < 92 {
            let direction = DIRECTIONS[self.rng.below(8) as usize];
            let buttons = if self.rng.below(4) == 0 {
                direction.with(Buttons::BOOST)
            } else {
                direction
            };
            Plan::Wander { buttons }
        } else {
            Plan::Rest
        }
    }

    /// A plan lasts between 1/6 and 2/3 of a second: long enough to carry
    /// out, short enough to react to the game.
    fn hold_ticks(&mut self, tick_rate: u16) -> u32 {
        let rate = u32::from(tick_rate.max(1));
        rate / 6 + 1 + self.rng.below(rate / 2)
    }
}

/// Steers `disc` at a point just behind the nearest ball (as seen from the
/// goal nearer to the ball), aiming where the ball will be shortly.
fn chase(world: &World, disc: &Disc, boost: bool) -> Input {
    let buttons = if boost {
        Buttons::BOOST
    } else {
        Buttons::default()
    };
    let Some(ball) = nearest_ball(world.balls(), disc.pos) else {
        return Input::default();
    };
    let arena = world.arena();
    let aim = ball.pos + ball.vel * LEAD_SECONDS;
    let goal_x = if aim.x < arena.width * 0.5 {
        0.0
    } else {
        arena.width
    };
    let goal = Vec2::new(goal_x, arena.height * 0.5);
    let to_goal = goal - aim;
    let to_goal_length = to_goal.length_squared().sqrt();
    let target = if to_goal_length > ARRIVED {
        aim - to_goal * (ball.radius / to_goal_length)
    } else {
        aim
    };
    Input {
        buttons,
        axes: Some(stick_towards(target - disc.pos)),
    }
}

/// The ball nearest to `pos`; the lowest index wins a tie.
fn nearest_ball(balls: &[Ball], pos: Vec2) -> Option<&Ball> {
    let mut nearest: Option<(&Ball, f32)> = None;
    for ball in balls {
        let distance_squared = (ball.pos - pos).length_squared();
        if nearest.is_none_or(|(_, best)| distance_squared < best) {
            nearest = Some((ball, distance_squared));
        }
    }
    nearest.map(|(ball, _)| ball)
}

/// Full stick deflection towards `offset`, or a centred stick when already
/// there. The float-to-`i8` cast rounds toward zero and saturates, the same
/// on every machine.
fn stick_towards(offset: Vec2) -> [i8; 2] {
    let length = offset.length_squared().sqrt();
    if length < ARRIVED {
        return [0, 0];
    }
    let scale = AXIS_FULL / length;
    [(offset.x * scale) as i8, (offset.y * scale) as i8]
}

#[cfg(test)]
mod tests {
    use lockstep_engine::Bots;
    use lockstep_protocol::PlayerInput;

    use super::*;
    use crate::WorldConfig;

    /// The inputs a bot seeded with `seed` gives while driving player 0
    /// alone for `ticks` ticks.
    fn input_sequence(seed: u64, ticks: usize) -> Vec<Input> {
        let me = PlayerId(0);
        let mut world = World::new(WorldConfig::new(11, 60), &[me]);
        let mut bot = Bot::new(seed);
        (0..ticks)
            .map(|_| {
                let input = bot.next_input(&world, me);
                world.step(&[PlayerInput { player: me, input }]);
                input
            })
            .collect()
    }

    #[test]
    fn same_seed_gives_the_same_input_sequence() {
        assert_eq!(input_sequence(5, 600), input_sequence(5, 600));
    }

    #[test]
    fn different_seeds_give_different_input_sequences() {
        assert_ne!(input_sequence(5, 600), input_sequence(6, 600));
    }

    #[test]
    fn bot_uses_buttons_axes_and_boost() {
        let inputs = input_sequence(5, 3_000);
        assert!(inputs.iter().any(|input| input.axes.is_some()));
        assert!(inputs
            .iter()
            .any(|input| input.axes.is_none() && input.buttons != Buttons::default()));
        assert!(inputs
            .iter()
            .any(|input| input.buttons.contains(Buttons::BOOST)));
    }

    #[test]
    fn a_player_without_a_disc_gets_no_input() {
        let world = World::new(WorldConfig::new(11, 60), &[PlayerId(0)]);
        let mut bot = Bot::new(1);
        let before = bot.clone();
        assert_eq!(bot.next_input(&world, PlayerId(9)), Input::default());
        assert_eq!(bot, before);
    }

    #[test]
    fn player_bots_depend_on_seed_and_id_not_roster() {
        let world = World::new(WorldConfig::new(3, 60), &[PlayerId(2), PlayerId(7)]);
        let mut alone = Bots::<World>::new(42, &[PlayerId(7)]);
        let mut pair = Bots::<World>::new(42, &[PlayerId(2), PlayerId(7)]);
        let from_alone = alone.inputs(&world);
        let from_pair = pair.inputs(&world);
        assert_eq!(from_pair.len(), 2);
        assert_eq!(from_alone[..], from_pair[1..]);
    }

    #[test]
    fn removed_players_get_no_bot_input() {
        let players = [PlayerId(0), PlayerId(1)];
        let mut world = World::new(WorldConfig::new(3, 60), &players);
        let mut bots = Bots::<World>::new(42, &players);
        world.remove_player(PlayerId(0));
        let inputs = bots.inputs(&world);
        assert_eq!(inputs.len(), 1);
        assert_eq!(inputs[0].player, PlayerId(1));
    }
}
