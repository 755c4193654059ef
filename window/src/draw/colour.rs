//! The players' colours: the same for a player on every peer and every
//! screen (the game, the lobby, the replay timeline, the report).

use lockstep_protocol::PlayerId;
use sdl2::pixels::Color;

/// Player colours, indexed by player id. Bright and well apart in hue so
/// discs and score entries tell players apart at a glance; none of them is
/// close to the pale ball colour or the gold of the goals.
const PALETTE: [Color; 8] = [
    Color::RGB(255, 82, 82),   // red
    Color::RGB(64, 156, 255),  // blue
    Color::RGB(80, 220, 100),  // green
    Color::RGB(190, 110, 255), // violet
    Color::RGB(0, 220, 220),   // cyan
    Color::RGB(255, 120, 200), // pink
    Color::RGB(255, 140, 40),  // orange
    Color::RGB(170, 230, 40),  // lime
];

/// The colour of a player's disc and score entry. Stable: it depends only
/// on the id, so every peer shows each player in the same colour. Ids past
/// the palette reuse it from the start.
#[must_use]
pub fn player_colour(id: PlayerId) -> Color {
    PALETTE[usize::from(id.0) % PALETTE.len()]
}

/// `colour` at 55% brightness, for outlines that belong to the same body.
pub(crate) fn darker(colour: Color) -> Color {
    let shade = |channel: u8| (u16::from(channel) * 55 / 100) as u8;
    Color::RGB(shade(colour.r), shade(colour.g), shade(colour.b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn player_colours_are_distinct_and_cycle() {
        for (i, a) in PALETTE.iter().enumerate() {
            assert!(!PALETTE[i + 1..].contains(a), "{a:?} appears twice");
        }
        let len = PALETTE.len() as u8;
        assert_eq!(player_colour(PlayerId(len + 1)), player_colour(PlayerId(1)));
    }
}
