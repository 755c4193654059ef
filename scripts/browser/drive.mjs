// Opens a page in a browser engine and prints every console line of the
// page on stdout, so a test reads a browser peer like a native client;
// on cue it takes screenshots and (Chromium) plays a touch drag. Needs
// node 20 or later (started with --experimental-websocket on node 20)
// and the engine's Debian package: `chromium`, `firefox-esr`, or
// `libwebkit2gtk-4.1-0` with `xvfb` (and `x11-apps` and `netpbm` for
// WebKit's screenshots).
//
//   node --experimental-websocket scripts/browser/drive.mjs [options] URL
//
// Options:
//   --engine chromium|firefox|webkit
//                              the engine (default chromium): Chromium
//                              headless through the DevTools protocol,
//                              Firefox headless through WebDriver BiDi,
//                              WebKitGTK's MiniBrowser on a private Xvfb
//   --engine-option OPTION     passed to the engine, repeatable: a
//                              command-line flag of Chromium's, a Firefox
//                              preference NAME=VALUE, an environment
//                              variable NAME=VALUE of WebKit's
//   --screenshot-on TEXT=FILE  when a console line contains TEXT (the first
//                              time), save a PNG of the page to FILE
//   --screenshot-delay MS      wait this long after the cue before each
//                              screenshot (default 0)
//   --drag-on TEXT             (Chromium) when a console line contains
//                              TEXT, drag a finger on the touch stick
//                              (lower left) to the right and hold it;
//                              prints the page's `window.lockstep.state()`
//                              before and while held, as
//                              `driver state before|held JSON`
//   --exit-on TEXT             leave once a line contains TEXT (default
//                              "final tick="); the browser is closed
//   --timeout SECONDS          leave after this long whatever happens
//                              (default 180)
//   --size WxH                 the window (default 1280x720)
//   --phone                    (Chromium) emulate a phone: 412x915, touch,
//                              mobile
//
// Lines of its own start with "driver ": `driver open ENGINE URL`, and
// `driver lobby_ms=N` when the first line containing "lobby" appears, N
// counted from the navigation. It exits 0 after the --exit-on line, 1 on
// a timeout or a browser lost, 2 on bad options.

import { rmSync } from "node:fs";

const ENGINES = ["chromium", "firefox", "webkit"];

function parseArgs(argv) {
  const options = {
    engine: "chromium",
    engineFlags: [],
    screenshots: [],
    drags: [],
    screenshotDelay: 0,
    exitOn: "final tick=",
    timeout: 180,
    width: 1280,
    height: 720,
    phone: false,
    url: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === "--engine") {
      options.engine = value();
      if (!ENGINES.includes(options.engine)) {
        fail(`--engine is one of ${ENGINES.join(", ")}, not ${options.engine}`);
      }
    } else if (arg === "--engine-option") {
      options.engineFlags.push(value());
    } else if (arg === "--screenshot-on") {
      const spec = value();
      const at = spec.lastIndexOf("=");
      if (at <= 0) fail(`--screenshot-on wants TEXT=FILE, not ${spec}`);
      options.screenshots.push({ text: spec.slice(0, at), file: spec.slice(at + 1), done: false });
    } else if (arg === "--screenshot-delay") {
      options.screenshotDelay = Number(value());
    } else if (arg === "--drag-on") {
      options.drags.push({ text: value(), done: false });
    } else if (arg === "--exit-on") {
      options.exitOn = value();
    } else if (arg === "--timeout") {
      options.timeout = Number(value());
      if (!(options.timeout > 0)) fail("--timeout wants a number of seconds");
    } else if (arg === "--size") {
      const [w, h] = value().split("x").map(Number);
      if (!(w > 0 && h > 0)) fail("--size wants WxH, like 1280x720");
      options.width = w;
      options.height = h;
    } else if (arg === "--phone") {
      options.phone = true;
      options.width = 412;
      options.height = 915;
    } else if (arg.startsWith("--")) {
      fail(`unknown option ${arg}`);
    } else {
      options.url = arg;
    }
  }
  if (!options.url) fail("usage: drive.mjs [options] URL");
  if (options.engine !== "chromium" && (options.phone || options.drags.length > 0)) {
    fail(`--phone and --drag-on need Chromium's touch emulation, not ${options.engine}`);
  }
  return options;
}

function fail(message) {
  console.error(`drive.mjs: ${message}`);
  process.exit(2);
}

const options = parseArgs(process.argv.slice(2));
if (typeof WebSocket === "undefined") {
  fail("this node has no WebSocket: run it with --experimental-websocket (node 20) or use node 22");
}

// What the engine started: process groups to end, directories to remove.
let closing = false;
let navigatedAt = performance.now();
const run = {
  groups: [],
  dirs: [],
  watch(child, name) {
    this.groups.push(child);
    child.on("exit", (code) => {
      if (!closing) {
        console.log(`driver ${name} exited with ${code}`);
        finish(1);
      }
    });
  },
  lost(what) {
    if (!closing) {
      console.log(`driver lost ${what}`);
      finish(1);
    }
  },
  navigated() {
    navigatedAt = performance.now();
    console.log(`driver open ${options.engine} ${options.url}`);
  },
};

function finish(code) {
  if (closing) return;
  closing = true;
  for (const child of run.groups.reverse()) {
    try {
      // The whole group: a browser's helpers would outlive their parent,
      // and Firefox never leaves by itself.
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  for (const dir of run.dirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // A helper may still hold a file; the directory is in /tmp.
    }
  }
  process.exit(code);
}
process.on("SIGTERM", () => finish(143));
process.on("SIGINT", () => finish(130));
setTimeout(() => {
  console.log(`driver timeout after ${options.timeout} s`);
  finish(1);
}, options.timeout * 1000).unref();

// One browser task at a time, in the order their cues came.
const queue = [];
let busy = false;
function later(task) {
  queue.push(task);
  if (!busy) drain();
}
async function drain() {
  busy = true;
  while (queue.length > 0) {
    const task = queue.shift();
    try {
      await task();
    } catch (error) {
      console.log(`driver ${error.message}`);
    }
  }
  busy = false;
}

let page = null;
let lobbySeen = false;
function onLine(line) {
  console.log(line);
  if (!lobbySeen && line.includes("lobby")) {
    lobbySeen = true;
    console.log(`driver lobby_ms=${Math.round(performance.now() - navigatedAt)}`);
  }
  for (const shot of options.screenshots) {
    if (!shot.done && line.includes(shot.text)) {
      shot.done = true;
      later(async () => {
        await new Promise((resolve) => setTimeout(resolve, options.screenshotDelay));
        await page.screenshot(shot.file);
        console.log(`driver screenshot ${shot.file}`);
      });
    }
  }
  for (const drag of options.drags) {
    if (!drag.done && line.includes(drag.text)) {
      drag.done = true;
      later(() => page.drag());
    }
  }
  if (line.includes(options.exitOn)) {
    // Whatever was queued (a last screenshot) goes first.
    later(async () => finish(0));
  }
}

const engine = await import(`./${options.engine}.mjs`);
try {
  // The page may print before open() returns: its tasks wait in the queue.
  busy = true;
  page = await engine.open(options, run, onLine);
  drain();
} catch (error) {
  console.log(`driver ${options.engine}: ${error.message}`);
  finish(1);
}
