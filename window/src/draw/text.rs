//! Text, as every screen writes it: the 8x8 font built into SDL2_gfx,
//! enlarged by whole multiples (through the canvas scale) so it stays
//! crisp, sized for the window's height (`text_size`), on a dark
//! see-through `backing` where it sits over something.

use sdl2::gfx::primitives::DrawRenderer;
use sdl2::pixels::Color;
use sdl2::rect::Rect;
use sdl2::render::{Canvas, RenderTarget};

use crate::draw::pixels::{coord_i32, count_i32, extent_i32, fill_box};

/// Side of a glyph of the SDL2_gfx built-in font, in pixels at scale 1.
pub(crate) const GLYPH: i32 = 8;
/// Gap around text inside its backing, in pixels at scale 1.
pub(crate) const PAD: i32 = 4;
/// Window height, in pixels, per step of text scale: text is 8 px tall in a
/// window about this high (a 720p window), 16 px at twice it, and so on,
/// switching halfway between.
const TEXT_STEP_HEIGHT: f32 = 720.0;
/// Backing of HUD, score line, banner and panels: dark and see-through, so
/// text is readable over anything without hiding the game.
const BACKING: Color = Color::RGBA(0, 0, 0, 170);
/// HUD text: a colour nothing else is drawn in, so a screenshot test can
/// tell the HUD's text apart.
pub const HUD_TEXT: Color = Color::RGB(225, 230, 240);

/// Integer text magnification for an area `height` pixels high: 1 up to
/// about 720 pixels, then one more per [`TEXT_STEP_HEIGHT`].
pub(crate) fn text_size(height: u32) -> i32 {
    ((height as f32 / TEXT_STEP_HEIGHT).round() as i32).max(1)
}

/// Draws `s` with its top-left corner at pixel (`x`, `y`), magnified
/// `size` times, then puts the canvas scale back. Text from outside (names,
/// status, banner) must go through [`printable`] first.
pub(crate) fn text<T: RenderTarget>(
    canvas: &mut Canvas<T>,
    x: i32,
    y: i32,
    size: i32,
    s: &str,
    colour: Color,
) -> Result<(), String> {
    let (old_x, old_y) = canvas.scale();
    let size = size.max(1);
    canvas.set_scale(size as f32, size as f32)?;
    let drawn = canvas.string(coord_i32(x / size), coord_i32(y / size), s, colour);
    canvas.set_scale(old_x, old_y)?;
    drawn
}

/// Pixel width of `columns` characters at text size `size`.
pub(crate) fn text_width(columns: usize, size: i32) -> i32 {
    count_i32(columns) * GLYPH * size
}

/// Text the built-in font can draw: printable ASCII, anything else shown as
/// `?`. The font only has single-byte glyphs, and a NUL byte would make the
/// SDL2 binding panic.
pub(crate) fn printable(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == ' ' || c.is_ascii_graphic() {
                c
            } else {
                '?'
            }
        })
        .collect()
}

/// The see-through backing of an overlay or a panel, filling `area`.
pub(crate) fn backing<T: RenderTarget>(canvas: &mut Canvas<T>, area: Rect) -> Result<(), String> {
    let (width, height) = (extent_i32(area.width()), extent_i32(area.height()));
    fill_box(canvas, area.x(), area.y(), width, height, BACKING)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_font_cannot_draw_are_made_safe() {
        assert_eq!(printable("Zoë\0x"), "Zo??x");
    }
}
