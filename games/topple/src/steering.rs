//! How one tick's [`Input`] becomes a thrust direction, in the physics
//! world's axes (y up; the wire's y points down).

use lockstep_protocol::{Buttons, Input};

/// `1 / sqrt(2)` as a constant, so a diagonal is the same bits everywhere.
const DIAGONAL: f32 = std::f32::consts::FRAC_1_SQRT_2;

/// Full deflection of a quantised stick axis.
const AXIS_FULL: f32 = 127.0;

/// The direction asked for, of length at most 1, and whether BOOST is held.
pub(crate) fn thrust(input: Input) -> ([f32; 2], bool) {
    let [x, y] = match input.axes {
        Some([x, y]) => stick(x, y),
        None => buttons(input.buttons),
    };
    ([x, -y], input.buttons.contains(Buttons::BOOST))
}

fn buttons(buttons: Buttons) -> [f32; 2] {
    let axis = |negative: Buttons, positive: Buttons| -> f32 {
        match (buttons.contains(negative), buttons.contains(positive)) {
            (true, false) => -1.0,
            (false, true) => 1.0,
            _ => 0.0,
        }
    };
    let (x, y) = (
        axis(Buttons::LEFT, Buttons::RIGHT),
        axis(Buttons::UP, Buttons::DOWN),
    );
    if x != 0.0 && y != 0.0 {
        [x * DIAGONAL, y * DIAGONAL]
    } else {
        [x, y]
    }
}

fn stick(x: i8, y: i8) -> [f32; 2] {
    let (x, y) = (f32::from(x) / AXIS_FULL, f32::from(y) / AXIS_FULL);
    let length_squared = x * x + y * y;
    if length_squared > 1.0 {
        // sqrt is correctly rounded on every machine.
        let length = length_squared.sqrt();
        [x / length, y / length]
    } else {
        [x, y]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(buttons: Buttons, axes: Option<[i8; 2]>) -> ([f32; 2], bool) {
        thrust(Input { buttons, axes })
    }

    #[test]
    fn up_is_positive_y_in_the_world_and_diagonals_have_length_one() {
        assert_eq!(of(Buttons::UP, None), ([0.0, 1.0], false));
        let ([x, y], boost) = of(
            Buttons::DOWN.with(Buttons::RIGHT).with(Buttons::BOOST),
            None,
        );
        assert_eq!((x, y, boost), (DIAGONAL, -DIAGONAL, true));
        assert_eq!(of(Buttons::LEFT.with(Buttons::RIGHT), None).0, [0.0, 0.0]);
    }

    #[test]
    fn a_stick_replaces_the_buttons_and_is_clamped_to_length_one() {
        assert_eq!(of(Buttons::LEFT, Some([127, 0])).0, [1.0, 0.0]);
        for axes in [[127, 127], [-128, -128], [-128, 0]] {
            let [x, y] = of(Buttons::default(), Some(axes)).0;
            assert!(x * x + y * y <= 1.000_001, "{axes:?}");
        }
    }
}
