//! Pixel arithmetic: the pixel a position falls on, and saturating
//! conversions between the integer types SDL2 (`i32`, `u32`) and SDL2_gfx
//! (`i16`) take, so a position far off the canvas clips instead of
//! wrapping; and the filled box every backing and many scenes are built
//! from.

use sdl2::gfx::primitives::DrawRenderer;
use sdl2::pixels::Color;
use sdl2::render::{Canvas, RenderTarget};

/// The pixel a coordinate falls on; `as` saturates at the `i32` range.
pub(crate) fn pixel(v: f32) -> i32 {
    v.round() as i32
}

/// A pixel coordinate for SDL2_gfx, which takes `i16`, saturated.
pub(crate) fn coord(v: f32) -> i16 {
    v.round() as i16
}

/// An `i32` pixel coordinate for SDL2_gfx, saturated to `i16`.
pub(crate) fn coord_i32(v: i32) -> i16 {
    i16::try_from(v).unwrap_or(if v < 0 { i16::MIN } else { i16::MAX })
}

/// A small count (lines, characters) as `i32`, saturated.
pub(crate) fn count_i32(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// A pixel length as a rectangle's side; nothing is shorter than 0.
pub(crate) fn extent(length: i32) -> u32 {
    length.max(0).unsigned_abs()
}

/// A rectangle's side as a pixel length, saturated.
pub(crate) fn extent_i32(side: u32) -> i32 {
    i32::try_from(side).unwrap_or(i32::MAX)
}

/// Fills a `width` x `height` pixel rectangle whose top-left corner is
/// (`x`, `y`); see-through colours blend. Nothing is drawn for an empty
/// rectangle.
pub(crate) fn fill_box<T: RenderTarget>(
    canvas: &mut Canvas<T>,
    x: i32,
    y: i32,
    width: i32,
    height: i32,
    colour: Color,
) -> Result<(), String> {
    if width <= 0 || height <= 0 {
        return Ok(());
    }
    // SDL2_gfx boxes include both corners.
    canvas.box_(
        coord_i32(x),
        coord_i32(y),
        coord_i32(x + width - 1),
        coord_i32(y + height - 1),
        colour,
    )
}
