//! The timer queue: packets waiting for their arrival time. Public for any
//! driver of an [`crate::Impairment`] outside this crate (the chaos run's
//! UDP proxy), so it queues packets the way the socket here does.

use std::collections::BTreeMap;
use std::time::Duration;

/// Packets keyed by arrival time, earliest first; packets due at the same
/// instant leave in the order they were queued, so equal arrival times never
/// reorder anything. Pure: the caller supplies the current time.
#[derive(Debug)]
pub struct DelayQueue<T> {
    /// `(arrival, sequence number)`: the sequence number breaks ties.
    entries: BTreeMap<(Duration, u64), T>,
    next_sequence: u64,
    capacity: usize,
}

impl<T> DelayQueue<T> {
    /// An empty queue that holds at most `capacity` packets.
    pub fn new(capacity: usize) -> Self {
        DelayQueue {
            entries: BTreeMap::new(),
            next_sequence: 0,
            capacity,
        }
    }

    /// Queues `item` to leave at `at`, or hands it back when the queue is
    /// full, as a router's full buffer drops what arrives.
    pub fn push(&mut self, at: Duration, item: T) -> Result<(), T> {
        if self.entries.len() >= self.capacity {
            return Err(item);
        }
        self.entries.insert((at, self.next_sequence), item);
        self.next_sequence += 1;
        Ok(())
    }

    /// When the earliest packet is due, if any is queued.
    pub fn next_due(&self) -> Option<Duration> {
        self.entries.first_key_value().map(|(&(at, _), _)| at)
    }

    /// Takes the earliest packet if it is due at `now`.
    pub fn pop_due(&mut self, now: Duration) -> Option<T> {
        let entry = self.entries.first_entry()?;
        (entry.key().0 <= now).then(|| entry.remove())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn releases_packets_in_arrival_order_once_due() {
        let mut queue = DelayQueue::new(10);
        queue.push(30 * MS, "c").unwrap();
        queue.push(10 * MS, "a").unwrap();
        queue.push(20 * MS, "b").unwrap();
        assert_eq!(queue.next_due(), Some(10 * MS));
        assert_eq!(queue.pop_due(9 * MS), None);
        assert_eq!(queue.pop_due(25 * MS), Some("a"));
        assert_eq!(queue.pop_due(25 * MS), Some("b"));
        assert_eq!(queue.pop_due(25 * MS), None);
        assert_eq!(queue.pop_due(30 * MS), Some("c"));
        assert_eq!(queue.next_due(), None);
    }

    #[test]
    fn packets_due_together_leave_in_queueing_order() {
        let mut queue = DelayQueue::new(100);
        for i in 0..50 {
            queue.push(MS, i).unwrap();
        }
        let order: Vec<i32> = std::iter::from_fn(|| queue.pop_due(MS)).collect();
        assert_eq!(order, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn a_full_queue_refuses_new_packets_until_one_leaves() {
        let mut queue = DelayQueue::new(2);
        queue.push(MS, 1).unwrap();
        queue.push(MS, 2).unwrap();
        assert_eq!(queue.push(MS, 3), Err(3));
        assert_eq!(queue.pop_due(MS), Some(1));
        assert_eq!(queue.push(MS, 3), Ok(()));
    }
}
