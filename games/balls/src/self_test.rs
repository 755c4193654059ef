//! The preflight: a short, crowded game whose hash tells whether this
//! machine and build compute the simulation like another one.
//!
//! A client computes [`self_test`] before it takes a slot and sends the
//! hash in its Hello; the server computes it with its own build and
//! refuses a client that differs, which would otherwise desync the game
//! minutes later. The parameters below are a contract between builds: the
//! same parameters on a machine that simulates the same bits give the same
//! hash, so change them only together with the protocol version.

use crate::settings::setup;
use crate::World;

/// Players of the self-test game, each driven by a seeded bot.
pub const SELF_TEST_PLAYERS: u8 = 4;
/// Seed of the self-test world and bots.
pub const SELF_TEST_SEED: u64 = 0x5e1f_7e57;
/// Balls in the arena: four times the default, so collisions (ball and
/// ball, ball and disc, ball and wall) happen every few ticks.
pub const SELF_TEST_BALLS: u16 = 96;
/// Ticks simulated: two seconds of game, a few milliseconds of work.
pub const SELF_TEST_TICKS: u32 = 120;
/// Tick rate of the self-test (sets the fixed dt).
pub const SELF_TEST_TICK_RATE: u16 = 60;

/// The hash of the world after the self-test game: [`SELF_TEST_PLAYERS`]
/// bots, [`SELF_TEST_SEED`], [`SELF_TEST_BALLS`] balls,
/// [`SELF_TEST_TICKS`] ticks at [`SELF_TEST_TICK_RATE`] Hz, through
/// [`lockstep_engine::offline`]: physics, collisions and the seeded RNG
/// all take part.
pub fn self_test() -> u64 {
    let setup = setup(
        SELF_TEST_PLAYERS,
        SELF_TEST_SEED,
        SELF_TEST_BALLS,
        SELF_TEST_TICK_RATE,
    );
    lockstep_engine::offline::<World>(&setup, SELF_TEST_TICKS).hash()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pinned like the golden hashes: a change here is a change to the
    /// simulation's results (or to the contract above).
    #[test]
    fn the_self_test_hash_is_pinned() {
        assert_eq!(format!("{:016x}", self_test()), "1675af9a52ca84bb");
    }
}
