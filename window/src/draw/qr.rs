//! A QR code drawn with rectangles: the lobby shows the address a phone's
//! browser opens to join.

use qrcode::{Color as Module, QrCode};
use sdl2::pixels::Color;
use sdl2::rect::Rect;
use sdl2::render::WindowCanvas;

/// Modules of light margin around the code (the standard asks for four;
/// two read fine on a dark screen with the light frame around them).
const QUIET: usize = 2;

/// The modules of the QR code of `text`, row by row (`true` is dark), and
/// the side in modules; `None` if the text does not fit a QR code.
#[must_use]
pub fn modules(text: &str) -> Option<(usize, Vec<bool>)> {
    let code = QrCode::new(text.as_bytes()).ok()?;
    let dark = code.to_colors().into_iter().map(|m| m == Module::Dark);
    Some((code.width(), dark.collect()))
}

/// The side in pixels of the code of `text` drawn `module` pixels per
/// module, with its margin.
#[must_use]
pub fn side(text: &str, module: u32) -> Option<u32> {
    let (width, _) = modules(text)?;
    Some((width + 2 * QUIET) as u32 * module)
}

/// Draws the QR code of `text` with its top left corner at (`x`, `y`),
/// `module` pixels per module, on a white square; nothing if the text does
/// not fit a QR code.
pub fn draw(
    canvas: &mut WindowCanvas,
    text: &str,
    x: i32,
    y: i32,
    module: u32,
) -> Result<(), String> {
    let Some((width, dark)) = modules(text) else {
        return Ok(());
    };
    let total = (width + 2 * QUIET) as u32 * module;
    canvas.set_draw_color(Color::RGB(255, 255, 255));
    canvas.fill_rect(Rect::new(x, y, total, total))?;
    canvas.set_draw_color(Color::RGB(0, 0, 0));
    let step = module as i32;
    let origin = (QUIET as i32) * step;
    for (index, _) in dark.iter().enumerate().filter(|(_, &d)| d) {
        let (row, column) = ((index / width) as i32, (index % width) as i32);
        let at = Rect::new(
            x + origin + column * step,
            y + origin + row * step,
            module,
            module,
        );
        canvas.fill_rect(at)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_makes_a_square_code_with_finder_patterns() {
        let (width, dark) = modules("http://192.168.1.20:7777/").expect("a code");
        assert_eq!(dark.len(), width * width);
        // The three finder patterns: 7x7 squares dark on their border.
        for (row, column) in [(0, 0), (0, width - 7), (width - 7, 0)] {
            assert!(
                dark[row * width + column],
                "corner of a finder at {row},{column}"
            );
            assert!(dark[(row + 6) * width + column + 6]);
            assert!(!dark[(row + 1) * width + column + 1], "its light ring");
        }
        assert_eq!(
            side("http://192.168.1.20:7777/", 3),
            Some((width as u32 + 4) * 3)
        );
    }
}
