//! [`ConditionedSocket`]: a quinn socket whose two directions pass through
//! an [`Impairment`] each.
//!
//! # How it works
//!
//! **Up** (quinn → network): [`AsyncUdpSocket::try_send`] copies each
//! datagram (quinn's buffer is only borrowed), asks the up model for its
//! fate, queues the copies in a [`DelayQueue`] and wakes the uplink task. That
//! task sleeps until the earliest arrival time (or a new packet), then sends
//! every due packet through the real socket, waiting for writability when the
//! kernel buffer is full. `try_send` itself never blocks: like a router, the
//! link accepts everything and drops what does not fit in its queue.
//!
//! **Down** (network → quinn): there is no task. [`AsyncUdpSocket::poll_recv`]
//! reads whatever the real socket has, asks the down model for each
//! datagram's fate and queues it; then it hands quinn the packets that are
//! due. When none are, it arms a timer for the earliest one, so quinn's
//! endpoint driver is woken either by the real socket or by that timer.
//!
//! A direction whose [`LinkConfig::is_clean`] holds is not conditioned at
//! all: calls go straight to the real socket, with its GSO/GRO batching, and
//! only the counters are kept. An impaired direction reports one datagram per
//! transmit and per receive ([`AsyncUdpSocket::max_transmit_segments`] and
//! [`AsyncUdpSocket::max_receive_segments`] are 1), so every datagram gets its
//! own fate; GRO batches arriving from the kernel are split here.
//!
//! Times are [`Duration`]s since the socket was created (`epoch`), so the
//! model and queue never see a clock. Tokio timers fire on a 1 ms wheel, so
//! a delayed packet leaves up to about a millisecond after its modelled time
//! and sub-millisecond jitter is coarsened; packets with no delay leave at
//! once.
//!
//! Dropping the socket lets the uplink task deliver what it still holds (a
//! delayed CONNECTION_CLOSE still reaches the peer) before it ends.

use std::fmt;
use std::future::{poll_fn, Future};
use std::io::{self, IoSliceMut};
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use quinn::udp::{EcnCodepoint, RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, UdpPoller};
use tokio::sync::Notify;
use tokio::time::{sleep_until, Instant, Sleep};
use tracing::{debug, Instrument};

use crate::delay_queue::DelayQueue;
use crate::impairment::{Fate, Impairment, LinkConfig};

/// Packets one direction may hold before it drops new ones. At a full
/// 1,500-byte MTU that is 15 MB, a bound on memory; a LAN game sends a few
/// hundred packets a second, so even a second of latency queues far fewer.
pub const MAX_QUEUED_PACKETS: usize = 10_000;

/// Random stream of the up direction's model (see [`Impairment::new`]).
const UP_STREAM: u64 = 0;
/// Random stream of the down direction's model, so a client configured
/// alike both ways does not lose the same packets in both.
const DOWN_STREAM: u64 = 1;

/// Size of the buffer the real socket is read into: the largest UDP payload,
/// which also bounds a GRO batch.
const RECV_BUFFER_SIZE: usize = 64 * 1024;

/// Reads from the real socket per `poll_recv` call before yielding, so a
/// flood that the link drops entirely cannot keep quinn's driver spinning
/// here (quinn bounds its own loops the same way).
const RECV_LOOP_BOUND: usize = 64;

/// Counters of one direction. Each datagram is counted once in `sent`; it
/// then ends `lost`, `dropped_full` or `delivered` (twice if duplicated).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirectionStats {
    /// Datagrams that entered the link.
    pub sent: u64,
    /// Copies that left it: handed to the real socket (up) or to quinn (down).
    pub delivered: u64,
    /// Datagrams the model dropped.
    pub lost: u64,
    /// Datagrams the model sent twice.
    pub duplicated: u64,
    /// Datagrams the model held back so later ones could overtake them.
    pub reordered: u64,
    /// Copies dropped because [`MAX_QUEUED_PACKETS`] were already waiting.
    pub dropped_full: u64,
}

/// Counters of both directions of a [`ConditionedSocket`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// From this socket to the network.
    pub up: DirectionStats,
    /// From the network to this socket.
    pub down: DirectionStats,
}

/// A [`quinn::AsyncUdpSocket`] that impairs both directions of a real UDP
/// socket. Create it with [`crate::bind`] or get one from
/// [`crate::endpoint`].
pub struct ConditionedSocket {
    inner: Arc<dyn AsyncUdpSocket>,
    /// Time zero of both models.
    epoch: Instant,
    up: Arc<Uplink>,
    down: Mutex<Downlink>,
    down_counters: Counters,
    /// Copies of the models' configs, readable without locking. A clean
    /// direction is passed straight through; configs are fixed at creation
    /// because quinn reads the segment limits only once.
    up_config: LinkConfig,
    down_config: LinkConfig,
}

/// The up direction, shared with the task that drains it.
struct Uplink {
    link: Mutex<Link<Outgoing>>,
    counters: Counters,
    /// Wakes the task: a packet was queued, or the socket closed.
    wake: Notify,
    /// Set when the socket is dropped: the task delivers what is queued
    /// (a delayed CONNECTION_CLOSE still reaches the peer) and then ends.
    closed: AtomicBool,
}

/// The down direction, driven by quinn's calls to `poll_recv`.
struct Downlink {
    link: Link<Incoming>,
    /// The real socket is read into this before each datagram is copied
    /// into the queue.
    buffer: Box<[u8]>,
    /// Fires when the earliest queued packet is due; made on first use,
    /// inside quinn's driver, since a tokio timer needs a runtime.
    timer: Option<Pin<Box<Sleep>>>,
}

/// A model and the queue of packets it has delayed.
struct Link<T> {
    model: Impairment,
    queue: DelayQueue<T>,
}

/// A datagram quinn sent, copied out of its borrowed buffer.
#[derive(Clone)]
struct Outgoing {
    destination: SocketAddr,
    ecn: Option<EcnCodepoint>,
    src_ip: Option<IpAddr>,
    contents: Box<[u8]>,
}

/// A datagram from the network, with the metadata quinn will be given.
#[derive(Clone)]
struct Incoming {
    meta: RecvMeta,
    contents: Box<[u8]>,
}

#[derive(Default)]
struct Counters {
    sent: AtomicU64,
    delivered: AtomicU64,
    lost: AtomicU64,
    duplicated: AtomicU64,
    reordered: AtomicU64,
    dropped_full: AtomicU64,
}

impl ConditionedSocket {
    /// Wraps `inner`, starting the uplink task on `runtime`.
    pub(crate) fn new(
        inner: Arc<dyn AsyncUdpSocket>,
        up: LinkConfig,
        down: LinkConfig,
        runtime: &tokio::runtime::Handle,
    ) -> Arc<Self> {
        let epoch = read_clock();
        let uplink = Arc::new(Uplink {
            link: Mutex::new(Link::new(up, UP_STREAM)),
            counters: Counters::default(),
            wake: Notify::new(),
            closed: AtomicBool::new(false),
        });
        if !up.is_clean() {
            let span = tracing::debug_span!("conditioned_uplink", local = ?inner.local_addr().ok());
            runtime.spawn(drive_uplink(uplink.clone(), inner.clone(), epoch).instrument(span));
        }
        Arc::new(ConditionedSocket {
            inner,
            epoch,
            up: uplink,
            down: Mutex::new(Downlink {
                link: Link::new(down, DOWN_STREAM),
                buffer: vec![0; RECV_BUFFER_SIZE].into_boxed_slice(),
                timer: None,
            }),
            down_counters: Counters::default(),
            up_config: up,
            down_config: down,
        })
    }

    /// What has happened to the traffic so far, in each direction.
    pub fn stats(&self) -> LinkStats {
        LinkStats {
            up: self.up.counters.snapshot(),
            down: self.down_counters.snapshot(),
        }
    }

    fn elapsed(&self) -> Duration {
        read_clock().saturating_duration_since(self.epoch)
    }
}

impl Drop for ConditionedSocket {
    fn drop(&mut self) {
        self.up.closed.store(true, Ordering::Release);
        self.up.wake.notify_one();
    }
}

impl fmt::Debug for ConditionedSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConditionedSocket")
            .field("inner", &self.inner)
            .field("up", &self.up_config)
            .field("down", &self.down_config)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl AsyncUdpSocket for ConditionedSocket {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        if self.up_config.is_clean() {
            self.inner.clone().create_io_poller()
        } else {
            Box::pin(AlwaysWritable)
        }
    }

    fn try_send(&self, transmit: &Transmit) -> io::Result<()> {
        let segment = transmit
            .segment_size
            .unwrap_or(transmit.contents.len())
            .max(1);
        let datagrams = transmit.contents.chunks(segment);
        let count = datagrams.len() as u64;
        if self.up_config.is_clean() {
            self.inner.try_send(transmit)?;
            self.up.counters.sent.fetch_add(count, Ordering::Relaxed);
            self.up
                .counters
                .delivered
                .fetch_add(count, Ordering::Relaxed);
            return Ok(());
        }
        {
            let mut link = lock(&self.up.link);
            // Read under the lock: concurrent senders then reach the model
            // in time order, as `Impairment::decide` asks.
            let now = self.elapsed();
            for datagram in datagrams {
                let packet = Outgoing {
                    destination: transmit.destination,
                    ecn: transmit.ecn,
                    src_ip: transmit.src_ip,
                    contents: datagram.into(),
                };
                link.admit(now, packet, &self.up.counters);
            }
        }
        self.up.wake.notify_one();
        Ok(())
    }

    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        if self.down_config.is_clean() {
            let count = ready!(self.inner.poll_recv(cx, bufs, meta))?;
            let datagrams: usize = meta[..count]
                .iter()
                .map(|m| m.len.div_ceil(m.stride.max(1)))
                .sum();
            let datagrams = datagrams as u64;
            self.down_counters
                .sent
                .fetch_add(datagrams, Ordering::Relaxed);
            self.down_counters
                .delivered
                .fetch_add(datagrams, Ordering::Relaxed);
            return Poll::Ready(Ok(count));
        }
        let mut down = lock(&self.down);
        for _ in 0..RECV_LOOP_BOUND {
            let now = self.elapsed();
            let arrived = match down.poll_arrivals(cx, &*self.inner, now, &self.down_counters) {
                Poll::Ready(Ok(())) => true,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => false,
            };
            let delivered = down.deliver_due(now, bufs, meta);
            if delivered > 0 {
                self.down_counters
                    .delivered
                    .fetch_add(delivered as u64, Ordering::Relaxed);
                return Poll::Ready(Ok(delivered));
            }
            // Sleeping is only safe once the real socket has said Pending
            // and so will wake us when more arrives.
            if arrived {
                continue;
            }
            match down.poll_timer(cx, self.epoch) {
                Poll::Ready(()) => continue,
                Poll::Pending => return Poll::Pending,
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    fn max_transmit_segments(&self) -> usize {
        if self.up_config.is_clean() {
            self.inner.max_transmit_segments()
        } else {
            1
        }
    }

    fn max_receive_segments(&self) -> usize {
        if self.down_config.is_clean() {
            self.inner.max_receive_segments()
        } else {
            1
        }
    }

    fn may_fragment(&self) -> bool {
        self.inner.may_fragment()
    }
}

impl<T: Clone> Link<T> {
    fn new(config: LinkConfig, stream: u64) -> Self {
        Link {
            model: Impairment::new(config, stream),
            queue: DelayQueue::new(MAX_QUEUED_PACKETS),
        }
    }

    /// Decides `packet`'s fate and queues its copies.
    fn admit(&mut self, now: Duration, packet: T, counters: &Counters) {
        counters.sent.fetch_add(1, Ordering::Relaxed);
        let fate = self.model.decide(now);
        let (at, copy_at, held_back) = match fate {
            Fate::Lost => {
                counters.lost.fetch_add(1, Ordering::Relaxed);
                return;
            }
            Fate::Delivered { at, held_back } => (at, None, held_back),
            Fate::Duplicated {
                at,
                copy_at,
                held_back,
            } => {
                counters.duplicated.fetch_add(1, Ordering::Relaxed);
                (at, Some(copy_at), held_back)
            }
        };
        if held_back {
            counters.reordered.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(copy_at) = copy_at {
            self.queue_copy(copy_at, packet.clone(), counters);
        }
        self.queue_copy(at, packet, counters);
    }

    fn queue_copy(&mut self, at: Duration, packet: T, counters: &Counters) {
        if self.queue.push(at, packet).is_err() {
            counters.dropped_full.fetch_add(1, Ordering::Relaxed);
            debug!(
                queued = MAX_QUEUED_PACKETS,
                "link queue full, packet dropped"
            );
        }
    }
}

impl Downlink {
    /// Reads one batch from the real socket into the queue: `Ready(Ok)` if
    /// something was read, `Pending` once the socket is empty (and will wake
    /// `cx`).
    fn poll_arrivals(
        &mut self,
        cx: &mut Context,
        inner: &dyn AsyncUdpSocket,
        now: Duration,
        counters: &Counters,
    ) -> Poll<io::Result<()>> {
        let mut metas = [RecvMeta::default()];
        let count =
            ready!(inner.poll_recv(cx, &mut [IoSliceMut::new(&mut self.buffer)], &mut metas))?;
        for meta in &metas[..count] {
            // A GRO batch is several datagrams of `stride` bytes back to back.
            for datagram in self.buffer[..meta.len].chunks(meta.stride.max(1)) {
                let packet = Incoming {
                    meta: RecvMeta {
                        len: datagram.len(),
                        stride: datagram.len(),
                        ..*meta
                    },
                    contents: datagram.into(),
                };
                self.link.admit(now, packet, counters);
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Copies the packets due at `now` into quinn's buffers; returns how
    /// many. A packet longer than its buffer is truncated, which quinn then
    /// rejects as corrupt; quinn's buffers hold its largest UDP payload, so
    /// this does not happen.
    fn deliver_due(
        &mut self,
        now: Duration,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> usize {
        let mut delivered = 0;
        for (buf, meta) in bufs.iter_mut().zip(meta.iter_mut()) {
            let Some(packet) = self.link.queue.pop_due(now) else {
                break;
            };
            let len = packet.contents.len().min(buf.len());
            buf[..len].copy_from_slice(&packet.contents[..len]);
            *meta = RecvMeta {
                len,
                stride: len,
                ..packet.meta
            };
            delivered += 1;
        }
        delivered
    }

    /// Waits for the earliest queued packet: `Ready` once it is due,
    /// `Pending` with `cx` registered otherwise (forever if the queue is
    /// empty; the real socket wakes us when something arrives).
    fn poll_timer(&mut self, cx: &mut Context, epoch: Instant) -> Poll<()> {
        let Some(deadline) = self
            .link
            .queue
            .next_due()
            .and_then(|at| epoch.checked_add(at))
        else {
            return Poll::Pending;
        };
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(sleep_until(deadline)));
        if timer.deadline() != deadline {
            timer.as_mut().reset(deadline);
        }
        timer.as_mut().poll(cx)
    }
}

/// Drains the up direction: sends every queued packet through the real
/// socket when it is due. Ends once the socket is dropped and the queue is
/// empty.
async fn drive_uplink(up: Arc<Uplink>, inner: Arc<dyn AsyncUdpSocket>, epoch: Instant) {
    let mut poller = inner.clone().create_io_poller();
    loop {
        let now = read_clock().saturating_duration_since(epoch);
        // One packet per lock, so the lock is never held across an await.
        let (due, next) = {
            let mut link = lock(&up.link);
            (link.queue.pop_due(now), link.queue.next_due())
        };
        if let Some(packet) = due {
            if send(&*inner, poller.as_mut(), &packet).await {
                up.counters.delivered.fetch_add(1, Ordering::Relaxed);
            }
            continue;
        }
        match next.map(|at| epoch.checked_add(at)) {
            Some(Some(deadline)) => {
                tokio::select! {
                    () = sleep_until(deadline) => {}
                    () = up.wake.notified() => {}
                }
            }
            // Queued too far in the future to ever be due: only new packets
            // or closing matter.
            Some(None) => up.wake.notified().await,
            None if up.closed.load(Ordering::Acquire) => return,
            None => up.wake.notified().await,
        }
    }
}

/// Sends one packet through the real socket, waiting while its buffer is
/// full. Returns whether it was sent; other errors are logged and the packet
/// dropped, as quinn does with errors it cannot act on.
async fn send(
    inner: &dyn AsyncUdpSocket,
    mut poller: Pin<&mut dyn UdpPoller>,
    packet: &Outgoing,
) -> bool {
    let transmit = Transmit {
        destination: packet.destination,
        ecn: packet.ecn,
        contents: &packet.contents,
        segment_size: None,
        src_ip: packet.src_ip,
    };
    loop {
        match inner.try_send(&transmit) {
            Ok(()) => return true,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if let Err(e) = poll_fn(|cx| poller.as_mut().poll_writable(cx)).await {
                    debug!(error = %e, "conditioned socket not writable, packet dropped");
                    return false;
                }
            }
            Err(e) => {
                debug!(error = %e, destination = %packet.destination, "conditioned send failed, packet dropped");
                return false;
            }
        }
    }
}

/// The poller of an impaired up direction: its queue always has room (or
/// drops), so quinn may always send.
#[derive(Debug)]
struct AlwaysWritable;

impl UdpPoller for AlwaysWritable {
    fn poll_writable(self: Pin<&mut Self>, _cx: &mut Context) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl Counters {
    fn snapshot(&self) -> DirectionStats {
        DirectionStats {
            sent: self.sent.load(Ordering::Relaxed),
            delivered: self.delivered.load(Ordering::Relaxed),
            lost: self.lost.load(Ordering::Relaxed),
            duplicated: self.duplicated.load(Ordering::Relaxed),
            reordered: self.reordered.load(Ordering::Relaxed),
            dropped_full: self.dropped_full.load(Ordering::Relaxed),
        }
    }
}

/// The conditioner's one clock read, on tokio's clock because its timers
/// run there. The model and the queues only see durations since the
/// socket's `epoch`, so they are tested with explicit time.
#[allow(
    clippy::disallowed_methods,
    reason = "the adapter owns real sockets and timers; the model is given time as durations"
)]
fn read_clock() -> Instant {
    Instant::now()
}

/// Locks `mutex`, ignoring poisoning: the guarded queues stay consistent
/// even if a holder panicked, and a conditioner must not take the endpoint
/// down with it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
