// Chromium (Debian's `chromium`), headless, through the DevTools protocol:
// the page's console calls and uncaught errors, screenshots, the page's
// state and a touch drag on the stick. Used by drive.mjs.

import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { connect, firstMatch, pause } from "./common.mjs";

// Starts Chromium and opens options.url; every console line goes to
// onLine. `run` keeps the browser's process group and profile, for the
// driver to end.
export async function open(options, run, onLine) {
  const profile = mkdtempSync(join(tmpdir(), "lockstep-chromium-"));
  run.dirs.push(profile);
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
      ...options.engineFlags,
      "about:blank",
    ],
    { stdio: ["ignore", "ignore", "pipe"], detached: true },
  );
  run.watch(browser, "chromium");
  const devtools = await firstMatch(browser.stderr, /DevTools listening on (ws:\/\/\S+)/);
  const port = new URL(devtools).port;
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const page = targets.find((t) => t.type === "page");
  if (!page) throw new Error("no page target in Chromium");

  const session = await connect(page.webSocketDebuggerUrl, "Chromium's DevTools", run, (message) => {
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
  });
  const send = (method, params = {}) => session.send(method, params, (m) => m.error?.message);

  const state = async (label) => {
    const { result } = await send("Runtime.evaluate", {
      expression: "JSON.stringify(window.lockstep && window.lockstep.state())",
      returnByValue: true,
    });
    console.log(`driver state ${label} ${result.value}`);
  };

  await send("Runtime.enable");
  await send("Page.enable");
  // The page gets exactly the size asked for (the window's own size
  // leaves room for a browser's frame).
  await send("Emulation.setDeviceMetricsOverride", {
    width: options.width,
    height: options.height,
    deviceScaleFactor: options.phone ? 2 : 1,
    mobile: options.phone,
  });
  if (options.phone || options.drags.length > 0) {
    await send("Emulation.setTouchEmulationEnabled", { enabled: true, maxTouchPoints: 5 });
  }
  run.navigated();
  await send("Page.navigate", { url: options.url });

  return {
    async screenshot(file) {
      const { data } = await send("Page.captureScreenshot", { format: "png" });
      writeFileSync(file, Buffer.from(data, "base64"));
    },
    // A finger on the touch stick (lower left), dragged to the right and
    // held; the page's state before and while held.
    async drag() {
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
    },
  };
}
