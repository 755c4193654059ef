//! Loopback benchmark: one server and N headless bot clients at 60 Hz for a
//! fixed number of ticks, as real processes over QUIC on 127.0.0.1.
//!
//! Prints per client: stalled ticks and UDP bytes per second in each
//! direction (from quinn's connection statistics), and the server's CPU time
//! (user + system, from /proc) per second of play.
//!
//! Run: `cargo build --release --bins && cargo bench -p lockstep-bench --bench loopback`
//! Options (environment): LOCKSTEP_BENCH_CLIENTS (default 4),
//! LOCKSTEP_BENCH_TICKS (default 3600, one minute at 60 Hz).

mod measure;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

use lockstep_client::io::clock;

use measure::{cpu_seconds, env_or, spread};

fn stat(line: &str, key: &str) -> u64 {
    line.split_whitespace()
        .find_map(|f| f.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let clients: u32 = env_or("LOCKSTEP_BENCH_CLIENTS", 4);
    let ticks: u32 = env_or("LOCKSTEP_BENCH_TICKS", 3600);
    let client_bin = lockstep_testkit::client_bin();
    let server_bin = client_bin.with_file_name("lockstep-server");
    assert!(
        server_bin.exists(),
        "build the server first: cargo build --release --bins"
    );
    let identity = std::env::temp_dir().join(format!("lockstep-bench-{}", std::process::id()));
    let mut server = Command::new(&server_bin)
        .args(["--listen", "127.0.0.1:0", "--players", &clients.to_string()])
        .arg("--identity-dir")
        .arg(&identity)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("server starts");
    let mut lines = BufReader::new(server.stdout.take().expect("stdout")).lines();
    let first = lines.next().and_then(Result::ok).expect("listening line");
    let rest = first.strip_prefix("listening on ").expect("listening line");
    let (addr, fingerprint) = rest.split_once(" fingerprint=").expect("fingerprint");
    let started = clock::now();
    let children: Vec<_> = (0..clients)
        .map(|i| {
            Command::new(&client_bin)
                .args([
                    "--connect",
                    addr,
                    "--fingerprint",
                    fingerprint,
                    "--headless",
                ])
                .args(["--name", &format!("bench{i}"), "--bot", &i.to_string()])
                .args(["--ticks", &ticks.to_string()])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("client starts")
        })
        .collect();
    let mut rows = Vec::new();
    for mut child in children {
        let mut out = String::new();
        child
            .stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut out)
            .expect("client output");
        let status = child.wait().expect("client exits");
        assert!(status.success(), "a client failed: {out}");
        rows.push(out);
    }
    let wall = clock::since(started).as_secs_f64();
    let server_cpu = cpu_seconds(server.id()).unwrap_or(f64::NAN);
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&identity);

    let seconds = f64::from(ticks) / 60.0;
    let mut up = Vec::new();
    let mut down = Vec::new();
    let mut hashes = Vec::new();
    println!("loopback: {clients} clients, {ticks} ticks at 60 Hz ({seconds:.0} s of play, {wall:.1} s wall)");
    for (i, out) in rows.iter().enumerate() {
        let stats = out.lines().find(|l| l.starts_with("stats ")).unwrap_or("");
        let last = out.lines().last().unwrap_or("");
        hashes.push(last.to_string());
        let tx = stat(stats, "tx_bytes") as f64 / seconds;
        let rx = stat(stats, "rx_bytes") as f64 / seconds;
        up.push(tx);
        down.push(rx);
        println!(
            "  client {i}: stalled_ticks={} up={tx:.0} B/s down={rx:.0} B/s rtt_us={}  {last}",
            stat(stats, "stalled_ticks"),
            stat(stats, "rtt_us")
        );
    }
    let (up_median, up_min, up_max) = spread(&mut up);
    let (down_median, down_min, down_max) = spread(&mut down);
    println!(
        "  per client up: median {up_median:.0} B/s (min {up_min:.0}, max {up_max:.0}); \
         down: median {down_median:.0} B/s (min {down_min:.0}, max {down_max:.0})"
    );
    println!(
        "  server CPU: {server_cpu:.2} s over {wall:.1} s wall = {:.2}% of one core",
        100.0 * server_cpu / wall
    );
    let same = hashes.iter().all(|h| *h == hashes[0]);
    println!("  identical final hashes: {same}");
    assert!(same, "clients disagree: {hashes:?}");
}
