// Drives a headless Chromium through the DevTools protocol: opens a page,
// prints every console line of the page on stdout (so a test reads a
// browser peer like a native client), and on cue takes screenshots and
// plays a touch drag. Needs Debian's `chromium` and node 20 or later
// (started with --experimental-websocket on node 20).
//
//   node --experimental-websocket scripts/browser/drive.mjs [options] URL
//
// Options:
//   --screenshot-on TEXT=FILE  when a console line contains TEXT (the first
//                              time), save a PNG of the page to FILE
//   --screenshot-delay MS      wait this long after the cue before each
//                              screenshot (default 0)
//   --drag-on TEXT             when a console line contains TEXT, drag a
//                              finger on the touch stick (lower left) to
//                              the right and hold it; prints the page's
//                              `window.lockstep.state()` before and while
//                              held, as `driver state before|held JSON`
//   --exit-on TEXT             leave once a line contains TEXT (default
//                              "final tick="); the browser is closed
//   --timeout SECONDS          leave after this long whatever happens
//                              (default 180)
//   --size WxH                 the window (default 1280x720)
//   --phone                    emulate a phone: 412x915, touch, mobile
//
// Lines of its own start with "driver ": `driver lobby_ms=N` when the
// first line containing "lobby" appears, N counted from the navigation.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

function parseArgs(argv) {
  const options = {
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
    if (arg === "--screenshot-on") {
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

const profile = mkdtempSync(join(tmpdir(), "lockstep-chromium-"));
const browser = spawn(
  process.env.CHROMIUM || "chromium",
  [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--remote-debugging-port=0",
    `--user-data-dir=${profile}`,
    `--window-size=${options.width},${options.height}`,
    "about:blank",
  ],
  { stdio: ["ignore", "ignore", "pipe"], detached: true },
);

let closing = false;
function finish(code) {
  if (closing) return;
  closing = true;
  try {
    // The whole group: Chromium's helpers would outlive their parent.
    process.kill(-browser.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
  try {
    rmSync(profile, { recursive: true, force: true });
  } catch {
    // A helper may still hold a file; the directory is in /tmp.
  }
  process.exit(code);
}
process.on("SIGTERM", () => finish(143));
process.on("SIGINT", () => finish(130));
setTimeout(() => {
  console.log(`driver timeout after ${options.timeout} s`);
  finish(1);
}, options.timeout * 1000).unref();
browser.on("exit", (code) => {
  if (!closing) {
    console.log(`driver chromium exited with ${code}`);
    finish(1);
  }
});

const devtools = await new Promise((resolve) => {
  let seen = "";
  browser.stderr.on("data", (chunk) => {
    seen += chunk.toString();
    const match = seen.match(/DevTools listening on (ws:\/\/\S+)/);
    if (match) {
      resolve(match[1]);
      seen = "";
    }
  });
});

const port = new URL(devtools).port;
const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
const page = targets.find((t) => t.type === "page");
if (!page) {
  console.log("driver no page target in Chromium");
  finish(1);
}

const socket = new WebSocket(page.webSocketDebuggerUrl);
await new Promise((resolve, reject) => {
  socket.onopen = resolve;
  socket.onerror = () => reject(new Error("cannot reach Chromium's DevTools"));
});
let nextId = 1;
const pending = new Map();
function send(method, params = {}) {
  const id = nextId++;
  socket.send(JSON.stringify({ id, method, params }));
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
}
socket.onclose = () => {
  if (!closing) {
    console.log("driver lost Chromium");
    finish(1);
  }
};

let navigatedAt = 0;
let lobbySeen = false;
const queue = [];
let busy = false;

socket.onmessage = (event) => {
  const message = JSON.parse(event.data);
  if (message.id && pending.has(message.id)) {
    const { resolve, reject, method } = pending.get(message.id);
    pending.delete(message.id);
    if (message.error) reject(new Error(`${method}: ${message.error.message}`));
    else resolve(message.result);
    return;
  }
  if (message.method === "Runtime.consoleAPICalled") {
    const text = message.params.args
      .map((arg) => (arg.value !== undefined ? String(arg.value) : arg.description ?? ""))
      .join(" ");
    for (const line of text.split("\n")) onLine(line);
  } else if (message.method === "Runtime.exceptionThrown") {
    const details = message.params.exceptionDetails;
    const text = details.exception?.description ?? details.text;
    onLine(`page error: ${text.split("\n")[0]}`);
  }
};

function onLine(line) {
  console.log(line);
  if (!lobbySeen && line.includes("lobby")) {
    lobbySeen = true;
    console.log(`driver lobby_ms=${Math.round(performance.now() - navigatedAt)}`);
  }
  for (const shot of options.screenshots) {
    if (!shot.done && line.includes(shot.text)) {
      shot.done = true;
      later(() => screenshot(shot.file));
    }
  }
  for (const drag of options.drags) {
    if (!drag.done && line.includes(drag.text)) {
      drag.done = true;
      later(touchDrag);
    }
  }
  if (line.includes(options.exitOn)) {
    // Whatever was queued (a last screenshot) goes first.
    later(async () => finish(0));
  }
}

// One DevTools task at a time, in the order their cues came.
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

async function screenshot(file) {
  await pause(options.screenshotDelay);
  const { data } = await send("Page.captureScreenshot", { format: "png" });
  writeFileSync(file, Buffer.from(data, "base64"));
  console.log(`driver screenshot ${file}`);
}

async function state(label) {
  const { result } = await send("Runtime.evaluate", {
    expression: "JSON.stringify(window.lockstep && window.lockstep.state())",
    returnByValue: true,
  });
  console.log(`driver state ${label} ${result.value}`);
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function touchDrag() {
  const x = Math.round(options.width * 0.15);
  const y = Math.round(options.height * 0.75);
  const reach = Math.round(Math.min(options.width, options.height) * 0.12);
  await state("before");
  const touch = (type, dx) =>
    send("Input.dispatchTouchEvent", {
      type,
      touchPoints: type === "touchEnd" ? [] : [{ x: x + dx, y, id: 1, radiusX: 8, radiusY: 8 }],
    });
  await touch("touchStart", 0);
  for (let step = 1; step <= 8; step++) {
    await touch("touchMove", Math.round((reach * step) / 8));
    await pause(20);
  }
  // Held long enough for the game to sample it on many ticks.
  await pause(1000);
  await state("held");
  await touch("touchEnd", reach);
  console.log("driver drag done");
}

await send("Runtime.enable");
await send("Page.enable");
// The page gets exactly the size asked for (the window's own size leaves
// room for a browser's frame).
await send("Emulation.setDeviceMetricsOverride", {
  width: options.width,
  height: options.height,
  deviceScaleFactor: options.phone ? 2 : 1,
  mobile: options.phone,
});
if (options.phone || options.drags.length > 0) {
  await send("Emulation.setTouchEmulationEnabled", { enabled: true, maxTouchPoints: 5 });
}
navigatedAt = performance.now();
console.log(`driver open ${options.url}`);
await send("Page.navigate", { url: options.url });
