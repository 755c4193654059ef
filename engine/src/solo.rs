//! A solo game: you against the computer's players, no network. The one
//! setup behind solo play in the window, the game loop lab and solo
//! recordings: player 0 is you, players 1 to N are opponents whose inputs
//! an [`Opponents`] chooses each tick.
//!
//! Time is the caller's business: solo play runs the ticks the accumulator
//! says are due (`Policy::SOLO`, MAX_LOOPS on), the lab runs whatever its
//! strategy asks for.

use lockstep_protocol::{Bundle, Input, PlayerId, PlayerInput, RosterEntry};

use crate::game::{apply, Bots, Game, HasBots, Setup};

/// Chooses the inputs of the players you play against, from the state they
/// see (the ball game's seeded bots).
pub trait Opponents<G> {
    /// One input for each opponent still in the game, for the next tick.
    fn inputs(&mut self, game: &G) -> Vec<PlayerInput>;
}

impl<G: HasBots> Opponents<G> for Bots<G> {
    fn inputs(&mut self, game: &G) -> Vec<PlayerInput> {
        Bots::inputs(self, game)
    }
}

/// You against `opponents`, with the two latest states for drawing.
#[derive(Debug)]
pub struct SoloGame<G, O> {
    /// The state before the last tick (interpolation start).
    pub previous: G,
    /// The state after the last tick.
    pub current: G,
    /// Every player and its name: you first, then "bot 1", "bot 2"...
    pub roster: Vec<(PlayerId, String)>,
    opponents: O,
}

impl<G: Game, O: Opponents<G>> SoloGame<G, O> {
    /// Your slot.
    pub const ME: PlayerId = PlayerId(0);

    /// A game with `count` opponents; `setup.players` is replaced by you
    /// and them. `name` is yours.
    pub fn new(mut setup: Setup<G::Settings>, count: u8, name: &str, opponents: O) -> Self {
        setup.players = (0..=count).map(PlayerId).collect();
        let current = G::start(&setup);
        let roster = setup
            .players
            .iter()
            .map(|&id| {
                let name = if id == Self::ME {
                    name.to_owned()
                } else {
                    format!("bot {}", id.0)
                };
                (id, name)
            })
            .collect();
        SoloGame {
            previous: current.clone(),
            current,
            roster,
            opponents,
        }
    }

    /// The roster as a replay header lists it.
    pub fn roster_entries(&self) -> Vec<RosterEntry> {
        self.roster
            .iter()
            .map(|(id, name)| RosterEntry {
                id: *id,
                name: name.clone(),
            })
            .collect()
    }

    /// The opponents' players, for whoever builds the [`Opponents`].
    pub fn opponent_ids(count: u8) -> Vec<PlayerId> {
        (1..=count).map(PlayerId).collect()
    }

    /// The bundle of the next tick: `mine` for you, the opponents' choice
    /// for them.
    pub fn next_bundle(&mut self, mine: Input) -> Bundle {
        let mut inputs = vec![PlayerInput {
            player: Self::ME,
            input: mine,
        }];
        inputs.extend(self.opponents.inputs(&self.current));
        Bundle {
            inputs,
            ..Bundle::default()
        }
    }

    /// Runs one tick with `mine` as your input; returns its bundle (for a
    /// recording).
    pub fn tick(&mut self, mine: Input) -> Bundle {
        let bundle = self.next_bundle(mine);
        self.previous.clone_from(&self.current);
        apply(&mut self.current, &bundle);
        bundle
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, Tally};

    /// Opponents that always hold the buttons of their id.
    struct Steady(Vec<PlayerId>);

    impl Opponents<Tally> for Steady {
        fn inputs(&mut self, _: &Tally) -> Vec<PlayerInput> {
            self.0
                .iter()
                .map(|&player| PlayerInput {
                    player,
                    input: Input {
                        buttons: lockstep_protocol::Buttons(player.0),
                        axes: None,
                    },
                })
                .collect()
        }
    }

    #[test]
    fn you_are_player_zero_and_the_opponents_are_named_bots() {
        let ids = SoloGame::<Tally, Steady>::opponent_ids(2);
        let game = SoloGame::<Tally, _>::new(testing::setup(0), 2, "ada", Steady(ids));
        let names: Vec<&str> = game.roster.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(names, ["ada", "bot 1", "bot 2"]);
        assert_eq!(game.roster_entries()[2].id, PlayerId(2));
    }

    #[test]
    fn a_tick_steps_everyone_and_keeps_the_state_before_it() {
        let ids = SoloGame::<Tally, Steady>::opponent_ids(2);
        let mut game = SoloGame::<Tally, _>::new(testing::setup(0), 2, "ada", Steady(ids));
        let before = game.current.clone();
        let bundle = game.tick(Input::default());
        assert_eq!(bundle.inputs.len(), 3);
        assert_eq!(game.previous, before);
        let mut replayed = before;
        apply(&mut replayed, &bundle);
        assert_eq!(game.current, replayed);
    }
}
