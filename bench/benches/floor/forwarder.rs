//! The bare forwarder: this bench binary started again with `--forwarder
//! N`, so that, like the server, it is a process of its own whose CPU time
//! /proc shows. It takes the server's endpoint and identity code, accepts N
//! connections and sends every datagram one of them receives on to all the
//! others, unchanged.

use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddr};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use anyhow::Context;
use lockstep_conditioner::LinkConfig;
use lockstep_server::Identity;

/// The argument that makes the bench binary a forwarder for the number of
/// clients after it.
const FLAG: &str = "--forwarder";

/// `Some(clients)` when this process was started as a forwarder.
pub fn requested() -> anyhow::Result<Option<usize>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag, clients] if flag == FLAG => {
            let clients = clients
                .parse()
                .with_context(|| format!("{FLAG} {clients:?}: not a number of clients"))?;
            Ok(Some(clients))
        }
        _ => Ok(None),
    }
}

/// Runs the forwarder: prints `listening on ADDR fingerprint=HEX` as the
/// server does, accepts `clients` connections, forwards until every one
/// has closed.
pub fn serve(clients: usize) -> anyhow::Result<()> {
    // One thread, as the server runs (server/src/main.rs), so the two
    // differ in what they do with a datagram, not in threading.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        // A fresh identity as the bench gives the server; its directory is
        // removed at once, since a killed forwarder cleans up nothing.
        let identity = {
            let dir = lockstep_testkit::TempDir::new("forwarder-identity");
            Identity::load_or_create(&dir.0).context("creating the forwarder's identity")?
        };
        let listen: SocketAddr = (Ipv4Addr::LOCALHOST, 0).into();
        let endpoint = lockstep_server::endpoint(
            listen,
            &identity,
            &LinkConfig::default(),
            lockstep_server::DEFAULT_DROP_TIMEOUT,
        )?;
        let addr = endpoint.local_addr()?;
        println!("listening on {addr} fingerprint={}", identity.fingerprint());
        let mut connections = Vec::with_capacity(clients);
        while connections.len() < clients {
            let incoming = endpoint.accept().await.context("the endpoint closed")?;
            connections.push(incoming.await.context("a client's handshake failed")?);
        }
        let connections: Arc<[quinn::Connection]> = connections.into();
        let tasks: Vec<_> = (0..clients)
            .map(|from| tokio::spawn(forward(from, connections.clone())))
            .collect();
        for task in tasks {
            task.await?;
        }
        endpoint.wait_idle().await;
        Ok(())
    })
}

/// Sends every datagram connection `from` receives on to every other
/// connection, until `from` closes.
async fn forward(from: usize, connections: Arc<[quinn::Connection]>) {
    while let Ok(datagram) = connections[from].read_datagram().await {
        for (to, connection) in connections.iter().enumerate() {
            if to != from {
                // A client that has left misses it: a bare forwarder has
                // nobody to tell.
                let _ = connection.send_datagram(datagram.clone());
            }
        }
    }
}

/// A running forwarder process, killed when dropped.
pub struct Forwarder {
    child: Child,
    pub addr: SocketAddr,
    pub fingerprint: String,
}

impl Forwarder {
    /// Starts a forwarder for `clients` clients and reads where it listens.
    pub fn start(clients: u32) -> anyhow::Result<Forwarder> {
        let exe = std::env::current_exe().context("finding the bench binary")?;
        let mut child = Command::new(exe)
            .args([FLAG, &clients.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .context("starting the forwarder")?;
        match announcement(&mut child) {
            Ok((addr, fingerprint)) => Ok(Forwarder {
                child,
                addr,
                fingerprint,
            }),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(e)
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// The address and fingerprint from the forwarder's first line.
fn announcement(child: &mut Child) -> anyhow::Result<(SocketAddr, String)> {
    let stdout = child.stdout.take().context("the forwarder's stdout")?;
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let (addr, fingerprint) = line
        .trim_end()
        .strip_prefix("listening on ")
        .and_then(|rest| rest.split_once(" fingerprint="))
        .with_context(|| format!("the forwarder did not start: {line:?}"))?;
    Ok((addr.parse()?, fingerprint.to_string()))
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
