//! How one tick's [`Input`] becomes a steering direction.

use glam::Vec2;
use lockstep_protocol::{Buttons, Input};

/// `1 / sqrt(2)` rounded to the nearest `f32`, a constant rather than a
/// `normalize()` call so a diagonal is the same bits however it is computed.
const DIAGONAL: f32 = std::f32::consts::FRAC_1_SQRT_2;

/// Full deflection of a quantised stick axis. `-128` is possible on the wire
/// and is clamped by the length limit below.
const AXIS_FULL: f32 = 127.0;

/// What a player asked for in one tick.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Steering {
    /// Direction to accelerate in, of length at most 1 (a stick pushed
    /// halfway asks for half the acceleration).
    pub(crate) direction: Vec2,
    /// Whether BOOST is held.
    pub(crate) boost: bool,
}

impl Steering {
    pub(crate) fn from_input(input: Input) -> Steering {
        let direction = match input.axes {
            Some([x, y]) => stick_direction(x, y),
            None => button_direction(input.buttons),
        };
        Steering {
            direction,
            boost: input.buttons.contains(Buttons::BOOST),
        }
    }
}

/// Direction buttons as a vector; opposite buttons cancel, diagonals have
/// length 1.
fn button_direction(buttons: Buttons) -> Vec2 {
    let axis = |negative: Buttons, positive: Buttons| -> f32 {
        let mut value = 0.0;
        if buttons.contains(negative) {
            value -= 1.0;
        }
        if buttons.contains(positive) {
            value += 1.0;
        }
        value
    };
    let direction = Vec2::new(
        axis(Buttons::LEFT, Buttons::RIGHT),
        axis(Buttons::UP, Buttons::DOWN),
    );
    if direction.x != 0.0 && direction.y != 0.0 {
        direction * DIAGONAL
    } else {
        direction
    }
}

/// Stick axes scaled to `[-1, 1]`, with the length clamped to 1 (corners of
/// the square stick range would otherwise be faster than straight lines).
fn stick_direction(x: i8, y: i8) -> Vec2 {
    let direction = Vec2::new(f32::from(x), f32::from(y)) / AXIS_FULL;
    let length_squared = direction.length_squared();
    if length_squared > 1.0 {
        // sqrt is correctly rounded by IEEE 754, and length_squared > 1 so
        // the division is safe.
        direction / length_squared.sqrt()
    } else {
        direction
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buttons(buttons: Buttons) -> Steering {
        Steering::from_input(Input {
            buttons,
            axes: None,
        })
    }

    #[test]
    fn no_input_means_no_steering() {
        assert_eq!(
            Steering::from_input(Input::default()),
            Steering {
                direction: Vec2::ZERO,
                boost: false
            }
        );
    }

    #[test]
    fn up_is_negative_y_because_y_points_down() {
        assert_eq!(buttons(Buttons::UP).direction, Vec2::new(0.0, -1.0));
    }

    #[test]
    fn opposite_buttons_cancel() {
        let steering = buttons(Buttons::LEFT.with(Buttons::RIGHT));
        assert_eq!(steering.direction, Vec2::ZERO);
    }

    #[test]
    fn diagonals_use_the_fixed_constant() {
        let steering = buttons(Buttons::DOWN.with(Buttons::RIGHT).with(Buttons::BOOST));
        assert_eq!(steering.direction, Vec2::new(DIAGONAL, DIAGONAL));
        assert!(steering.boost);
    }

    #[test]
    fn axes_replace_direction_buttons() {
        let steering = Steering::from_input(Input {
            buttons: Buttons::LEFT,
            axes: Some([127, 0]),
        });
        assert_eq!(steering.direction, Vec2::new(1.0, 0.0));
    }

    #[test]
    fn stick_length_is_clamped_to_one() {
        for axes in [[127, 127], [-128, -128], [-128, 0]] {
            let direction = Steering::from_input(Input {
                buttons: Buttons::default(),
                axes: Some(axes),
            })
            .direction;
            assert!(direction.length_squared() <= 1.000_001, "{axes:?}");
        }
    }
}
