//! Where a game's field lands on a canvas: the [`Layout`] that maps the
//! picture's units (the game's own, y down) to the window's pixels, with
//! the field's [margin](lockstep_engine::view::Area::margin) around it
//! and black bars where the window's shape differs from the field's.

use glam::Vec2;
use lockstep_engine::view::{Area, Point};
use sdl2::pixels::Color;
use sdl2::rect::Rect;

use crate::draw::text::text_size;

/// Behind everything: the bars left over when the window's shape differs
/// from the field's.
pub(crate) const LETTERBOX: Color = Color::RGB(0, 0, 0);
/// Pixels of the field's height (with its margin) per pixel of a
/// hairline, as the text steps with the window's height
/// (`text::TEXT_STEP_HEIGHT`).
const HAIRLINE_STEP: f32 = 720.0;

/// Where a game's field lands on a canvas: one scale factor and an
/// offset, the same along both axes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layout {
    /// The field, in the picture's units.
    pub(crate) field: Area,
    /// Pixels per unit of the picture, the same along both axes.
    scale: f32,
    /// The pixel the picture's (0, 0) maps to.
    origin: Vec2,
    /// Integer text magnification for this window size.
    text_size: i32,
    /// The area the field is fitted into: the overlays stay inside it.
    pub(crate) area: Rect,
}

impl Layout {
    /// The largest view of the field and its margin that fits `area`,
    /// centred in it.
    pub(crate) fn fit(area: Rect, field: Area) -> Layout {
        let size = Vec2::new(area.width() as f32, area.height() as f32);
        let margin = field.margin();
        let view = Vec2::new(field.width(), field.height()) + Vec2::splat(2.0 * margin);
        // The tighter axis decides; the other gets bars.
        let (across, down) = (size.x / view.x, size.y / view.y);
        let scale = if across < down { across } else { down };
        let offset = Vec2::new(area.x() as f32, area.y() as f32);
        let corner = offset + (size - view * scale) * 0.5;
        let min = Vec2::new(field.min.x, field.min.y);
        Layout {
            field,
            scale,
            origin: corner + (Vec2::splat(margin) - min) * scale,
            text_size: text_size(area.height()),
            area,
        }
    }

    /// The pixel position of a point of the picture.
    pub fn to_screen(self, pos: Point) -> Vec2 {
        self.origin + Vec2::new(pos.x, pos.y) * self.scale
    }

    /// A length of the picture in pixels.
    pub fn length(self, units: f32) -> f32 {
        units * self.scale
    }

    /// The text magnification for this window size: the labels of a
    /// picture match the HUD's.
    pub fn text_size(self) -> i32 {
        self.text_size
    }

    /// A hairline's width in pixels ([`Width::Lines`](lockstep_engine::view::Width)):
    /// one while the field and its margin are up to about 720 pixels
    /// tall, a whole pixel more per 720 beyond (the text's steps in a
    /// landscape window, and still thin in a tall narrow one).
    pub fn hairline(self) -> f32 {
        let tall = (self.field.height() + 2.0 * self.field.margin()) * self.scale;
        (tall / HAIRLINE_STEP).round().max(1.0)
    }

    /// The point of the picture the score strip stands on: over the
    /// middle of the field, a sixth of the margin above its top edge
    /// (above the ball game's top wall, which is drawn that thick outside
    /// the field).
    pub(crate) fn above_the_field(self) -> Vec2 {
        let (field, margin) = (self.field, self.field.margin());
        self.to_screen(Point::new(field.centre().x, field.min.y - margin / 6.0))
    }

    /// The left and right pixel columns of the field with its margin.
    pub(crate) fn view_columns(self) -> (f32, f32) {
        let (field, margin) = (self.field, self.field.margin());
        let left = self.to_screen(Point::new(field.min.x - margin, field.min.y));
        let right = self.to_screen(Point::new(field.max.x + margin, field.min.y));
        (left.x, right.x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ball game's field.
    const FIELD: Area = Area::new(Point::new(0.0, 0.0), Point::new(1600.0, 900.0));

    fn hairline(width: u32, height: u32) -> f32 {
        Layout::fit(Rect::new(0, 0, width, height), FIELD).hairline()
    }

    #[test]
    fn a_hairline_steps_with_the_fields_height_on_screen_like_the_text() {
        for (size, text) in [
            ((640, 360), 1),
            ((1280, 720), 1),
            ((1920, 1080), 2),
            ((3840, 2160), 3),
        ] {
            assert_eq!(hairline(size.0, size.1), text as f32, "{size:?}");
            assert_eq!(text_size(size.1), text, "{size:?}");
        }
        // A tall narrow window shows the field small: its rims stay thin.
        assert_eq!(hairline(824, 1830), 1.0);
    }

    #[test]
    fn a_field_off_the_origin_is_centred_with_its_margin_like_one_at_it() {
        let area = Rect::new(0, 0, 1280, 720);
        let at_origin = Layout::fit(area, FIELD);
        let shifted = Area::new(Point::new(-24.0, -17.0), Point::new(24.0, 10.0));
        let metres = Layout::fit(area, shifted);
        let (a, b) = (
            at_origin.to_screen(FIELD.max),
            metres.to_screen(shifted.max),
        );
        assert!((a - b).length() < 0.01, "{a} {b}");
        let (a, b) = (
            at_origin.to_screen(FIELD.min),
            metres.to_screen(shifted.min),
        );
        assert!((a - b).length() < 0.01, "{a} {b}");
    }
}
