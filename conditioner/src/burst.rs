//! Bursty loss: the Gilbert–Elliott two-state model.
//!
//! Wi-Fi and congested links do not lose packets one at a time: they lose a
//! few in a row, then nothing for a while. Independent loss at the same
//! average rate is much kinder to a lockstep game, whose datagrams repeat
//! unacknowledged inputs and so survive any single loss. Bursts are what make
//! it stall.

use crate::rng::SplitMix64;

/// Parameters of a Gilbert–Elliott chain: a link that is either *good* or
/// *bad*, switching state before each packet, with its own loss probability
/// in each state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GilbertElliott {
    /// Probability that a good link turns bad before the next packet.
    pub p_good_to_bad: f64,
    /// Probability that a bad link recovers before the next packet; the mean
    /// time spent bad is `1 / p_bad_to_good` packets.
    pub p_bad_to_good: f64,
    /// Loss probability while good (0 in the simple Gilbert model).
    pub loss_in_good: f64,
    /// Loss probability while bad (1 in the simple Gilbert model).
    pub loss_in_bad: f64,
}

/// Why [`GilbertElliott::from_average_loss`] refused its arguments.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum BurstError {
    /// The average loss must be in `[0, 1)`: a link that loses everything
    /// has no bursts to speak of.
    #[error("average loss {0} is outside [0, 1)")]
    LossOutOfRange(f64),
    /// A burst is at least one lost packet.
    #[error("mean burst length {0} is not a number of packets >= 1")]
    BurstTooShort(f64),
    /// Bursts this short cannot add up to this much loss: the gaps between
    /// bursts would have to be shorter than one packet.
    #[error("an average loss of {loss} needs a mean burst length of at least {min_burst}, not {mean_burst}")]
    Unreachable {
        /// The requested average loss.
        loss: f64,
        /// The requested mean burst length.
        mean_burst: f64,
        /// The shortest mean burst length that reaches `loss`.
        min_burst: f64,
    },
}

impl GilbertElliott {
    /// The simple Gilbert model (every packet lost while bad, none while
    /// good) with long-run loss `loss` and bursts of `mean_burst` packets on
    /// average.
    ///
    /// Time spent bad is geometric, so its mean is `B = 1 / r` with
    /// `r = p_bad_to_good`. The chain is bad a fraction `p / (p + r)` of the
    /// time (`p = p_good_to_bad`), and that is the loss rate `L`. Solving:
    ///
    /// ```text
    /// r = 1 / B
    /// p = L * r / (1 - L) = L / (B * (1 - L))
    /// ```
    ///
    /// `p` must not exceed 1, so `B >= L / (1 - L)`: at 50% loss bursts
    /// average at least one packet, at 75% at least three.
    pub fn from_average_loss(loss: f64, mean_burst: f64) -> Result<Self, BurstError> {
        if !(0.0..1.0).contains(&loss) {
            return Err(BurstError::LossOutOfRange(loss));
        }
        if !mean_burst.is_finite() || mean_burst < 1.0 {
            return Err(BurstError::BurstTooShort(mean_burst));
        }
        let p_good_to_bad = loss / (mean_burst * (1.0 - loss));
        if p_good_to_bad > 1.0 {
            return Err(BurstError::Unreachable {
                loss,
                mean_burst,
                min_burst: loss / (1.0 - loss),
            });
        }
        Ok(GilbertElliott {
            p_good_to_bad,
            p_bad_to_good: 1.0 / mean_burst,
            loss_in_good: 0.0,
            loss_in_bad: 1.0,
        })
    }

    /// Long-run fraction of packets lost: the time-weighted mix of the two
    /// states' loss probabilities.
    pub fn average_loss(&self) -> f64 {
        let switching = self.p_good_to_bad + self.p_bad_to_good;
        if switching <= 0.0 {
            // Neither state is ever left; the chain starts good.
            return self.loss_in_good;
        }
        let bad = self.p_good_to_bad / switching;
        bad * self.loss_in_bad + (1.0 - bad) * self.loss_in_good
    }
}

/// A running Gilbert–Elliott chain: the parameters plus the current state.
#[derive(Clone, Debug)]
pub(crate) struct BurstChain {
    model: GilbertElliott,
    bad: bool,
}

impl BurstChain {
    /// A chain that starts good, as a link does when a session begins.
    pub(crate) fn new(model: GilbertElliott) -> Self {
        BurstChain { model, bad: false }
    }

    /// Steps the chain for one packet and says whether that packet is lost.
    pub(crate) fn lose(&mut self, rng: &mut SplitMix64) -> bool {
        let switch = if self.bad {
            self.model.p_bad_to_good
        } else {
            self.model.p_good_to_bad
        };
        if rng.chance(switch) {
            self.bad = !self.bad;
        }
        let loss = if self.bad {
            self.model.loss_in_bad
        } else {
            self.model.loss_in_good
        };
        rng.chance(loss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_model_has_the_requested_average_loss() {
        for (loss, burst) in [(0.01, 1.0), (0.1, 3.0), (0.3, 5.0), (0.5, 1.0)] {
            let model = GilbertElliott::from_average_loss(loss, burst).unwrap();
            assert!((model.average_loss() - loss).abs() < 1e-12, "{model:?}");
            assert!((1.0 / model.p_bad_to_good - burst).abs() < 1e-12);
        }
    }

    #[test]
    fn zero_loss_never_turns_bad() {
        let model = GilbertElliott::from_average_loss(0.0, 4.0).unwrap();
        assert_eq!(model.p_good_to_bad, 0.0);
        let mut chain = BurstChain::new(model);
        let mut rng = SplitMix64::new(1, 0);
        assert!((0..10_000).all(|_| !chain.lose(&mut rng)));
    }

    #[test]
    fn refuses_impossible_parameters() {
        assert_eq!(
            GilbertElliott::from_average_loss(1.0, 5.0),
            Err(BurstError::LossOutOfRange(1.0))
        );
        assert!(matches!(
            GilbertElliott::from_average_loss(f64::NAN, 5.0),
            Err(BurstError::LossOutOfRange(_))
        ));
        assert_eq!(
            GilbertElliott::from_average_loss(0.1, 0.5),
            Err(BurstError::BurstTooShort(0.5))
        );
        assert!(matches!(
            GilbertElliott::from_average_loss(0.75, 2.0),
            Err(BurstError::Unreachable { min_burst, .. }) if (min_burst - 3.0).abs() < 1e-12
        ));
        assert!(GilbertElliott::from_average_loss(0.75, 3.0).is_ok());
    }
}
