//! What the proxy does to each packet of a bot's link: nothing, except
//! while a `link` fault's window is open, when the conditioner's model
//! ([`Impairment`]) loses packets in bursts and delays the rest.
//!
//! Pure, like the model: the proxy ([`crate::io::proxy`]) says when each
//! packet arrived and sends what this answers, when it says. A window's
//! two directions draw from independent streams of its seed, as the
//! conditioner's socket does.

use std::time::Duration;

use lockstep_conditioner::{DelayQueue, Fate, Impairment, LinkConfig, MAX_QUEUED_PACKETS};

/// Which way a packet travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From the bot to the server.
    Up,
    /// From the server to the bot.
    Down,
}

/// What one window did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowStats {
    /// Packets that met the window.
    pub packets: u64,
    /// Of those, lost.
    pub lost: u64,
    /// Of those, delivered late (by a nonzero delay).
    pub delayed: u64,
    /// The longest delay given to one.
    pub longest: Duration,
}

/// An open window: a model per direction and what they did.
#[derive(Debug)]
struct Window {
    up: Impairment,
    down: Impairment,
    stats: WindowStats,
}

/// A link's shaping: a window (or none) and the packets it holds back.
#[derive(Debug)]
pub struct Shaper<T> {
    window: Option<Window>,
    queue: DelayQueue<T>,
}

impl<T> Default for Shaper<T> {
    fn default() -> Self {
        Shaper {
            window: None,
            queue: DelayQueue::new(MAX_QUEUED_PACKETS),
        }
    }
}

impl<T: Clone> Shaper<T> {
    /// Opens a window: from now on packets meet `config`.
    pub fn open(&mut self, config: LinkConfig) {
        self.window = Some(Window {
            up: Impairment::new(config, 0),
            down: Impairment::new(config, 1),
            stats: WindowStats::default(),
        });
    }

    /// Closes the window and says what it did; packets it holds still
    /// leave when due.
    pub fn close(&mut self) -> Option<WindowStats> {
        self.window.take().map(|w| w.stats)
    }

    /// A packet that arrived at `now` going `direction`: handed back to
    /// send at once, or kept (lost, or queued for [`Shaper::due`]).
    pub fn route(&mut self, direction: Direction, now: Duration, packet: T) -> Option<T> {
        let Some(window) = &mut self.window else {
            return Some(packet);
        };
        let model = match direction {
            Direction::Up => &mut window.up,
            Direction::Down => &mut window.down,
        };
        let fate = model.decide(now);
        window.stats.packets += 1;
        if fate == Fate::Lost {
            window.stats.lost += 1;
            return None;
        }
        let arrivals: Vec<Duration> = fate.arrivals().collect();
        let mut packet = Some(packet);
        for (i, &at) in arrivals.iter().enumerate() {
            let delay = at.saturating_sub(now);
            if !delay.is_zero() {
                window.stats.delayed += 1;
                window.stats.longest = window.stats.longest.max(delay);
            }
            // A copy for every arrival but the last, which takes the
            // packet itself.
            let item = if i + 1 < arrivals.len() {
                packet.clone()
            } else {
                packet.take()
            };
            if let Some(item) = item {
                // A full queue drops it, as a router's full buffer would.
                let _ = self.queue.push(at, item);
            }
        }
        None
    }

    /// A held-back packet due at `now`, if any.
    pub fn due(&mut self, now: Duration) -> Option<T> {
        self.queue.pop_due(now)
    }

    /// When the next held-back packet is due.
    pub fn next_due(&self) -> Option<Duration> {
        self.queue.next_due()
    }
}

#[cfg(test)]
mod tests {
    use lockstep_conditioner::GilbertElliott;

    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn bad_link() -> LinkConfig {
        LinkConfig {
            latency: 40 * MS,
            burst: GilbertElliott::from_average_loss(0.25, 5.0).ok(),
            seed: 9,
            ..LinkConfig::default()
        }
    }

    #[test]
    fn without_a_window_every_packet_passes_at_once() {
        let mut shaper = Shaper::default();
        for i in 0..100u32 {
            assert_eq!(shaper.route(Direction::Up, i * MS, i), Some(i));
        }
        assert_eq!(shaper.next_due(), None);
        assert_eq!(shaper.close(), None);
    }

    #[test]
    fn a_window_loses_some_packets_and_delays_the_others_by_its_latency() {
        let mut shaper = Shaper::default();
        shaper.open(bad_link());
        for i in 0..1000u32 {
            assert_eq!(shaper.route(Direction::Down, i * MS, i), None);
        }
        let mut delivered = Vec::new();
        while let Some(at) = shaper.next_due() {
            assert!(at >= 40 * MS);
            delivered.push(shaper.due(at).unwrap());
        }
        let stats = shaper.close().unwrap();
        assert_eq!(stats.packets, 1000);
        assert_eq!(stats.lost + delivered.len() as u64, 1000);
        assert!((150..350).contains(&stats.lost), "{stats:?}");
        assert_eq!(stats.delayed, delivered.len() as u64);
        assert_eq!(stats.longest, 40 * MS);
        // In order: the model keeps a FIFO.
        assert!(delivered.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn the_same_seed_loses_the_same_packets() {
        let lost = || {
            let mut shaper = Shaper::default();
            shaper.open(bad_link());
            for i in 0..500u32 {
                shaper.route(Direction::Up, i * MS, i);
            }
            let mut kept = Vec::new();
            while let Some(at) = shaper.next_due() {
                kept.push(shaper.due(at).unwrap());
            }
            kept
        };
        assert_eq!(lost(), lost());
    }

    #[test]
    fn closing_the_window_lets_packets_pass_again_and_held_ones_still_leave() {
        let mut shaper = Shaper::default();
        shaper.open(LinkConfig {
            latency: 30 * MS,
            ..LinkConfig::default()
        });
        assert_eq!(shaper.route(Direction::Up, MS, 1), None);
        let stats = shaper.close().unwrap();
        assert_eq!((stats.packets, stats.lost, stats.delayed), (1, 0, 1));
        assert_eq!(shaper.route(Direction::Up, 2 * MS, 2), Some(2));
        assert_eq!(shaper.due(30 * MS), None);
        assert_eq!(shaper.due(31 * MS), Some(1));
    }
}
