//! Seeded computer players: each picks a body in the towers, flies to its
//! inner side and rams it towards the nearer edge, and climbs back when it
//! drifts off the platform.

use lockstep_engine::HasBots;
use lockstep_protocol::{Buttons, Input, PlayerId};

use crate::arena::{PhysicsSettings, MAX_BODIES, PLATFORM_HALF_WIDTH, RAM_RADIUS};
use crate::game::Physics;
use crate::state::BodyView;
use lockstep_rng::Rng;

/// One bot's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhysicsBot {
    rng: Rng,
    /// The body it is after.
    target: usize,
    /// Ticks left on this plan.
    left: u32,
    /// Whether it steers with a stick (else with the direction buttons).
    stick: bool,
}

impl HasBots for Physics {
    const ABOUT: &'static str =
        "Topple, rigid bodies on rapier2d; --set bodies=N, 0-2000, default 160";
    type Bot = PhysicsBot;

    fn bot(seed: u64, player: PlayerId) -> PhysicsBot {
        let mut rng = Rng::new(seed ^ (u64::from(player.0) << 48) ^ 0x70_7071);
        let stick = rng.next_u64() & 1 == 1;
        PhysicsBot {
            rng,
            target: 0,
            left: 0,
            stick,
        }
    }

    fn bot_input(&self, bot: &mut PhysicsBot, me: PlayerId) -> Input {
        let Some(ram) = self.rams().iter().find(|r| r.player == me && r.active) else {
            return Input::default();
        };
        let views: Vec<BodyView> = self.bodies().collect();
        let first = 1 + self.rams().len();
        if bot.left == 0 || bot.target >= views.len() {
            bot.left = 90 + (bot.rng.next_u64() % 150) as u32;
            bot.target = pick_target(&views, first, &mut bot.rng).unwrap_or(0);
        }
        bot.left -= 1;
        let at = views[ram.body as usize].translation;
        let side = if at.x < 0.0 { -1.0 } else { 1.0 };
        let (dx, dy, boost) = if at.y < 0.5 && at.x.abs() < PLATFORM_HALF_WIDTH + RAM_RADIUS {
            // Under the platform or at its edge: out from under it.
            (side, if at.y < -1.5 { 0.0 } else { 0.6 }, true)
        } else if at.x.abs() > PLATFORM_HALF_WIDTH || at.y < 0.5 {
            // Beside the platform: up and back in.
            (-side * 0.5, 1.0, true)
        } else if bot.target >= first {
            let target = views[bot.target].translation;
            let outward = if target.x < 0.0 { -1.0 } else { 1.0 };
            let (bx, by) = (target.x - outward * 1.5, target.y + 0.2);
            let (ex, ey) = (bx - at.x, by - at.y);
            if ex * ex + ey * ey > 1.5 {
                (ex, ey + 0.4, ey > 3.0 || ex * ex > 36.0)
            } else {
                (outward, 0.15, true)
            }
        } else {
            (-at.x, 1.0, false)
        };
        steer(bot.stick, dx, dy, boost)
    }

    fn parse_settings(pairs: &[(String, String)]) -> Result<PhysicsSettings, String> {
        let mut settings = PhysicsSettings::default();
        for (key, value) in pairs {
            match key.as_str() {
                "bodies" => {
                    settings.bodies =
                        value
                            .parse()
                            .ok()
                            .filter(|&n| n <= MAX_BODIES)
                            .ok_or_else(|| {
                                format!(
                                    "bodies must be a number from 0 to {MAX_BODIES}, not {value:?}"
                                )
                            })?;
                }
                _ => {
                    return Err(format!(
                        "the game physics has no setting {key:?}; it has bodies"
                    ))
                }
            }
        }
        Ok(settings)
    }

    fn describe_settings(settings: &PhysicsSettings) -> String {
        format!("{} bodies", settings.bodies)
    }
}

/// Of a few tower bodies drawn at random, the one nearest an edge that is
/// still on the platform.
fn pick_target(views: &[BodyView], first: usize, rng: &mut Rng) -> Option<usize> {
    let towers = views.len().checked_sub(first).filter(|&n| n > 0)?;
    let mut best: Option<(usize, f32)> = None;
    for _ in 0..6 {
        let slot = first + (rng.next_u64() % towers as u64) as usize;
        let t = views[slot].translation;
        let reach = t.x.abs();
        if t.y > 0.0 && reach < PLATFORM_HALF_WIDTH && best.is_none_or(|(_, r)| reach > r) {
            best = Some((slot, reach));
        }
    }
    best.map(|(slot, _)| slot)
}

/// The input that steers towards `(dx, dy)` (world axes, y up).
fn steer(stick: bool, dx: f32, dy: f32, boost: bool) -> Input {
    let boost = if boost { Buttons::BOOST } else { Buttons(0) };
    if stick {
        let length = (dx * dx + dy * dy).sqrt();
        if length == 0.0 {
            return Input {
                buttons: boost,
                axes: Some([0, 0]),
            };
        }
        let axis = |v: f32| (v / length * 127.0) as i8;
        return Input {
            buttons: boost,
            axes: Some([axis(dx), axis(-dy)]),
        };
    }
    let mut buttons = boost;
    if dx < -0.3 {
        buttons = buttons.with(Buttons::LEFT);
    } else if dx > 0.3 {
        buttons = buttons.with(Buttons::RIGHT);
    }
    if dy > 0.3 {
        buttons = buttons.with(Buttons::UP);
    } else if dy < -0.3 {
        buttons = buttons.with(Buttons::DOWN);
    }
    Input {
        buttons,
        axes: None,
    }
}
