//! How Tally looks, as the window and the page draw it: a bar chart, one
//! bar per player in its colour, as tall as the player's speed, with the
//! player's name and counter above it. In drawing units of its own: a
//! 1600 by 900 field (16:9, like the ball game's), y down.

use lockstep_engine::view::{Area, Paint, Picture, Point, View};
use lockstep_protocol::PlayerId;

use crate::{Counter, Tally};

/// The field's far corner; it starts at the origin.
const FIELD: Point = Point::new(1600.0, 900.0);
/// The floor the bars stand on.
const FLOOR: Paint = Paint::rgb(30, 36, 50);
/// A speed of this fills the field's height: held buttons add at most 31
/// a tick and the speed halves every tick, so it stays below 62.
const TOP_SPEED: f32 = 62.0;
/// The share of its slot a bar leaves empty on each side.
const BAR_GAP: f32 = 0.2;

impl View for Tally {
    fn field(&self) -> Area {
        Area::new(Point::new(0.0, 0.0), FIELD)
    }

    fn view(
        previous: &Tally,
        current: &Tally,
        alpha: f32,
        _me: Option<PlayerId>,
        out: &mut Picture,
    ) {
        out.rect(Point::new(0.0, 0.0), FIELD, FLOOR);
        let counters = current.counters();
        let slot = FIELD.x / counters.len().max(1) as f32;
        for (i, counter) in counters.iter().enumerate() {
            let speed = speed_between(previous.counters(), counter, alpha);
            let left = slot * i as f32 + slot * BAR_GAP;
            let right = slot * (i + 1) as f32 - slot * BAR_GAP;
            let top = bar_top(speed);
            let paint = Paint::Player(counter.player);
            out.rect(Point::new(left, top), Point::new(right, FIELD.y), paint);
            let above = Point::new((left + right) * 0.5, top);
            out.name(above, counter.player, counter.count.to_string());
        }
    }

    // Tally keeps no scores: its counters stand on its bars.
}

/// Where the top of a bar of `speed` is drawn: the faster, the higher,
/// the whole field's height at [`TOP_SPEED`] and above.
fn bar_top(speed: f32) -> f32 {
    FIELD.y * (1.0 - (speed / TOP_SPEED).clamp(0.0, 1.0))
}

/// `counter`'s speed between its value in `previous` and now; a player
/// who just came back is drawn at its speed now.
fn speed_between(previous: &[Counter], counter: &Counter, alpha: f32) -> f32 {
    previous
        .iter()
        .find(|old| old.player == counter.player)
        .map_or(counter.speed, |old| {
            old.speed + (counter.speed - old.speed) * alpha
        })
}

#[cfg(test)]
mod tests {
    use lockstep_engine::view::Shape;
    use lockstep_engine::{offline, Setup};

    use super::*;

    fn counter(player: u8, speed: f32) -> Counter {
        Counter {
            player: PlayerId(player),
            count: 0,
            speed,
        }
    }

    #[test]
    fn the_bar_height_follows_the_speed() {
        assert_eq!(bar_top(0.0), 900.0);
        assert_eq!(bar_top(31.0), 450.0);
        assert_eq!(bar_top(TOP_SPEED), 0.0);
        assert_eq!(bar_top(500.0), 0.0, "a bar never leaves the field");
    }

    #[test]
    fn a_bar_is_drawn_between_ticks_and_a_returning_player_at_its_speed_now() {
        let previous = [counter(0, 10.0)];
        assert_eq!(speed_between(&previous, &counter(0, 20.0), 0.5), 15.0);
        assert_eq!(speed_between(&previous, &counter(3, 20.0), 0.5), 20.0);
    }

    #[test]
    fn the_picture_has_one_bar_per_player_named_with_its_count() {
        let setup = Setup {
            seed: 1,
            tick_rate: 60,
            settings: (),
            players: vec![PlayerId(0), PlayerId(2)],
        };
        let game = offline::<Tally>(&setup, 30);
        let mut out = Picture::new();
        Tally::view(&game, &game, 1.0, None, &mut out);
        let bars: Vec<Paint> = out.shapes()[1..]
            .iter()
            .filter_map(|shape| match shape {
                Shape::Rect { fill, .. } => Some(*fill),
                _ => None,
            })
            .collect();
        assert_eq!(
            bars,
            [Paint::Player(PlayerId(0)), Paint::Player(PlayerId(2))]
        );
        let labels: Vec<(Option<PlayerId>, String)> = out
            .shapes()
            .iter()
            .filter_map(|shape| match shape {
                Shape::Label { player, text, .. } => Some((*player, text.clone())),
                _ => None,
            })
            .collect();
        let counts = game.counters();
        assert_eq!(
            labels,
            [
                (Some(PlayerId(0)), counts[0].count.to_string()),
                (Some(PlayerId(2)), counts[1].count.to_string()),
            ]
        );
        assert!(game.scores().is_empty(), "Tally keeps no scores");
    }
}
