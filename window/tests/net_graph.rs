//! The net graph in a real window under Xvfb, during a game on an impaired
//! link: the screenshot shows the charts and event markers.

use std::time::Duration;

use lockstep_testkit::{windowed, Client, Server, TempDir};
use lockstep_window::draw::chart::{Mark, PLOT};
use lockstep_window::draw::net_graph::NetGraph;
use lockstep_window::draw::screenshot::load_png_rgb;

#[test]
fn the_net_graph_shows_charts_and_markers_on_a_bad_link() {
    let mut server = Server::start(3, &["--seed", "23"]);
    let dir = TempDir::new("net-graph");
    let shot = dir.0.join("graph.png");
    let shot_arg = shot.to_string_lossy().to_string();
    let window = windowed(
        &server,
        "viewer",
        &[
            "--bot",
            "7",
            "--ticks",
            "660",
            "--window-size",
            "640x360",
            "--net-graph",
            "--sim-latency-ms",
            "40",
            "--sim-jitter-ms",
            "15",
            "--sim-loss-pct",
            "3",
            "--sim-seed",
            "4",
            "--screenshot",
            &shot_arg,
            "--screenshot-tick",
            "600",
        ],
    );
    let bots: Vec<Client> = (0..2)
        .map(|i| Client::headless_bot(&server, &format!("bot{i}"), i, 660))
        .collect();
    server.wait_for("start players=", Duration::from_secs(20));
    let finished = window.finish(Duration::from_secs(90));
    assert!(finished.success, "{}", finished.stderr);
    for bot in bots {
        bot.finish(Duration::from_secs(60));
    }
    let (width, height, pixels) = load_png_rgb(&shot).expect("the screenshot is a PNG");
    assert_eq!((width, height), (640, 360));
    let area = NetGraph::area((width, height));
    let inside = |x: u32, y: u32| {
        (area.x() as u32..area.right() as u32).contains(&x)
            && (area.y() as u32..area.bottom() as u32).contains(&y)
    };
    let mut plot = 0;
    let mut marks = std::collections::BTreeMap::new();
    for (index, p) in pixels.chunks_exact(3).enumerate() {
        let (x, y) = (index as u32 % width, index as u32 / width);
        if !inside(x, y) {
            continue;
        }
        let p = (p[0], p[1], p[2]);
        if p == (PLOT.r, PLOT.g, PLOT.b) {
            plot += 1;
        }
        for mark in Mark::ALL {
            let c = mark.colour();
            if p == (c.r, c.g, c.b) {
                *marks.entry(mark).or_insert(0) += 1;
            }
        }
    }
    // Six plots fill most of the graph; a marker crosses a plot's height.
    assert!(plot > 20_000, "only {plot} pixels of plot background");
    let marked: Vec<_> = marks.iter().filter(|(_, &n)| n >= 30).collect();
    assert!(!marked.is_empty(), "no event marker: {marks:?}");
    if let Some(keep) = std::env::var_os("LOCKSTEP_KEEP_GRAPH") {
        let _ = std::fs::copy(&shot, keep);
    }
}
