//! [`PlainSocket`]: a quinn socket that asks the operating system for
//! nothing beyond sending and receiving datagrams.
//!
//! quinn's own socket (quinn-udp) sets options at creation for ECN, GSO,
//! GRO and path-MTU discovery. Under wine that setup fails before a packet
//! is sent: querying `IPV6_V6ONLY` on an IPv4 socket fails with
//! `WSAEOPNOTSUPP` (10045), and a dual-stack socket then needs `IP_RECVECN`,
//! which wine lacks (`WSAENOPROTOOPT`, 10042), so a Windows build cannot
//! even bind. This socket is the
//! Windows fallback: one datagram per transmit and per receive, no ECN, and
//! [`AsyncUdpSocket::may_fragment`] true, so quinn keeps its packets at the
//! conservative initial size instead of probing for a larger path MTU.
//!
//! It is built on every platform so that it is tested natively.

use std::fmt;
use std::future::Future;
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use quinn::udp::{RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, UdpPoller};
use tokio::io::ReadBuf;

/// A [`quinn::AsyncUdpSocket`] over a plain [`tokio::net::UdpSocket`],
/// for platforms where quinn-udp's socket options are missing (wine).
/// [`crate::bind`] uses it on Windows.
#[derive(Debug)]
pub struct PlainSocket {
    io: tokio::net::UdpSocket,
}

impl PlainSocket {
    /// Takes over `socket`, registering it with the current tokio runtime.
    /// Fails outside a runtime.
    pub fn new(socket: std::net::UdpSocket) -> io::Result<Arc<Self>> {
        socket.set_nonblocking(true)?;
        let io = tokio::net::UdpSocket::from_std(socket)?;
        Ok(Arc::new(PlainSocket { io }))
    }
}

impl AsyncUdpSocket for PlainSocket {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        Box::pin(WritablePoller {
            socket: self,
            writable: None,
        })
    }

    /// Sends `transmit` as one datagram: quinn never batches, since
    /// [`AsyncUdpSocket::max_transmit_segments`] is 1. ECN marks and a
    /// source address are ignored; the plain socket cannot set them.
    fn try_send(&self, transmit: &Transmit) -> io::Result<()> {
        self.io
            .try_send_to(transmit.contents, transmit.destination)
            .map(drop)
    }

    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        let (Some(buf), Some(slot)) = (bufs.first_mut(), meta.first_mut()) else {
            return Poll::Ready(Ok(0));
        };
        let mut buf = ReadBuf::new(buf);
        let addr = ready!(self.io.poll_recv_from(cx, &mut buf))?;
        let len = buf.filled().len();
        *slot = RecvMeta {
            addr,
            len,
            stride: len,
            ecn: None,
            dst_ip: None,
        };
        Poll::Ready(Ok(1))
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.local_addr()
    }

    fn may_fragment(&self) -> bool {
        true
    }
}

/// Waits for the socket to become writable. Each poller keeps its own
/// pending `writable()` future, and so its own waker: several quinn tasks
/// may wait at once, which `poll_send_ready` (one waker) would not allow.
struct WritablePoller {
    socket: Arc<PlainSocket>,
    writable: Option<WritableFuture>,
}

type WritableFuture = Pin<Box<dyn Future<Output = io::Result<()>> + Send + Sync>>;

impl UdpPoller for WritablePoller {
    fn poll_writable(mut self: Pin<&mut Self>, cx: &mut Context) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let writable = this.writable.get_or_insert_with(|| {
            let socket = this.socket.clone();
            Box::pin(async move { socket.io.writable().await })
        });
        let result = ready!(writable.as_mut().poll(cx));
        // A finished future must not be polled again; the next call waits
        // on a fresh one.
        this.writable = None;
        Poll::Ready(result)
    }
}

impl fmt::Debug for WritablePoller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WritablePoller")
            .field("socket", &self.socket)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::future::poll_fn;
    use std::net::{Ipv4Addr, UdpSocket};

    use super::*;

    fn bind_loopback() -> Arc<PlainSocket> {
        let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).expect("loopback binds");
        PlainSocket::new(socket).expect("inside a runtime")
    }

    #[tokio::test]
    async fn delivers_one_datagram_with_its_source() {
        let sender = bind_loopback();
        let receiver = bind_loopback();
        let transmit = Transmit {
            destination: receiver.local_addr().expect("bound"),
            ecn: None,
            contents: b"tick 7",
            segment_size: None,
            src_ip: None,
        };
        let mut poller = sender.clone().create_io_poller();
        poll_fn(|cx| poller.as_mut().poll_writable(cx))
            .await
            .expect("writable");
        sender.try_send(&transmit).expect("sent");

        let mut buf = [0u8; 64];
        let mut meta = [RecvMeta::default(), RecvMeta::default()];
        let count =
            poll_fn(|cx| receiver.poll_recv(cx, &mut [IoSliceMut::new(&mut buf)], &mut meta))
                .await
                .expect("received");
        assert_eq!(count, 1);
        assert_eq!(&buf[..meta[0].len], b"tick 7");
        assert_eq!(meta[0].stride, meta[0].len);
        assert_eq!(meta[0].addr, sender.local_addr().expect("bound"));
        assert_eq!(meta[0].ecn, None);
    }

    #[tokio::test]
    async fn asks_quinn_for_single_datagrams() {
        let socket = bind_loopback();
        assert_eq!(socket.max_transmit_segments(), 1);
        assert_eq!(socket.max_receive_segments(), 1);
        assert!(socket.may_fragment());
    }
}
