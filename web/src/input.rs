//! The page's input as the wire carries it: the buttons the keyboard, a
//! controller's D-pad and the touch boost button hold, and a stick (a
//! controller's left stick or the touch stick) quantised to `i8` the way
//! the native window quantises a controller's.

use lockstep_protocol::{Buttons, Input};

/// About 25% of full deflection, as the native window's dead zone: stick
/// drift stays below it, and inside it the buttons keep working.
const DEAD_ZONE: f32 = 0.25;

/// The input of `buttons` (the wire's bits; others ignored) and a stick
/// at `x`, `y` (each -1..=1, y down), `None` when no stick is touched.
pub fn page_input(buttons: u8, stick: Option<(f32, f32)>) -> Input {
    let axes = stick.and_then(|(x, y)| {
        let (x, y) = (finite(x), finite(y));
        if x * x + y * y < DEAD_ZONE * DEAD_ZONE {
            return None;
        }
        let quantise = |v: f32| (v.clamp(-1.0, 1.0) * 127.0) as i8;
        Some([quantise(x), quantise(y)])
    });
    Input {
        buttons: Buttons(buttons & Buttons::ALL.0),
        axes,
    }
}

/// `v`, or 0 when it is not a number (the page never sends one, but a
/// script could).
fn finite(v: f32) -> f32 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stick_is_quantised_to_the_wire_and_ignored_inside_the_dead_zone() {
        assert_eq!(page_input(0, Some((1.0, 0.0))).axes, Some([127, 0]));
        assert_eq!(page_input(0, Some((-2.0, 0.5))).axes, Some([-127, 63]));
        assert_eq!(page_input(0, Some((0.1, -0.1))).axes, None);
        assert_eq!(page_input(0, Some((f32::NAN, 0.0))).axes, None);
        assert_eq!(page_input(0, None).axes, None);
    }

    #[test]
    fn only_the_wire_buttons_are_kept() {
        assert_eq!(page_input(0xff, None).buttons, Buttons::ALL);
        assert_eq!(page_input(Buttons::BOOST.0, None).buttons, Buttons::BOOST);
    }
}
