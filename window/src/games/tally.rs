//! Tally in the window: a bar chart, one bar per player in its colour, as
//! tall as the player's speed, with its counter above it.

use glam::Vec2;
use lockstep_tally::{Counter, Tally};
use sdl2::pixels::Color;
use sdl2::render::WindowCanvas;

use crate::draw::colour::player_colour;
use crate::draw::pixels::pixel;
use crate::draw::scene::{lerp, world_rect, Layout, Roster, Scene};
use crate::draw::text::{text, text_width, GLYPH};

/// The field, in Tally's drawing units: 16:9, like the ball game's.
const FIELD: Vec2 = Vec2::new(1600.0, 900.0);
/// The floor the bars stand on.
const FLOOR: Color = Color::RGB(30, 36, 50);
/// A speed of this fills the field's height: held buttons add at most
/// 31 a tick and the speed halves every tick, so it stays below 62.
const TOP_SPEED: f32 = 62.0;

impl Scene for Tally {
    fn field(&self) -> Vec2 {
        FIELD
    }

    fn draw_scene(
        canvas: &mut WindowCanvas,
        layout: &Layout,
        previous: &Tally,
        current: &Tally,
        alpha: f32,
        roster: &Roster,
    ) -> Result<(), String> {
        world_rect(canvas, layout, (Vec2::ZERO, FIELD), FLOOR)?;
        let counters = current.counters();
        let slot = FIELD.x / counters.len().max(1) as f32;
        for (i, counter) in counters.iter().enumerate() {
            let speed = speed_between(previous.counters(), counter, alpha);
            let left = slot * i as f32 + slot * 0.2;
            let right = slot * (i + 1) as f32 - slot * 0.2;
            let top = FIELD.y * (1.0 - (speed / TOP_SPEED).clamp(0.0, 1.0));
            let bar = (Vec2::new(left, top), Vec2::new(right, FIELD.y));
            world_rect(canvas, layout, bar, player_colour(counter.player))?;
            let size = layout.text_size();
            let label = format!("{} {}", roster.name(counter.player), counter.count);
            let centre = layout.to_screen(Vec2::new((left + right) * 0.5, top));
            let x = pixel(centre.x) - text_width(label.len(), size) / 2;
            let y = pixel(centre.y) - (GLYPH + 3) * size;
            text(canvas, x, y, size, &label, player_colour(counter.player))?;
        }
        Ok(())
    }
}

/// `counter`'s speed between its value in `previous` and now; a
/// player who just came back is drawn at its speed now.
fn speed_between(previous: &[Counter], counter: &Counter, alpha: f32) -> f32 {
    previous
        .iter()
        .find(|old| old.player == counter.player)
        .map_or(counter.speed, |old| {
            lerp(Vec2::splat(old.speed), Vec2::splat(counter.speed), alpha).x
        })
}
