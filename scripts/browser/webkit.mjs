// WebKitGTK (Debian's libwebkit2gtk-4.1-0): its MiniBrowser on a private
// Xvfb screen, which prints the page's console on its stdout when the
// setting enable-write-console-messages-to-stdout is on
// (`URL:LINE:COL: CONSOLE LOG text`; `CONSOLE JS ERROR text` for an
// uncaught error). No WebDriver: Debian's WebKitWebDriver shows no
// console and has no BiDi. Screenshots are of the whole screen (the
// window and its toolbar), through xwd. Engine options are environment
// variables (`NAME=VALUE`: JavaScriptCore's `JSC_...` options). Used by
// drive.mjs.

import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import { arch, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

import { firstMatch } from "./common.mjs";

const MINIBROWSER = process.env.MINIBROWSER || "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";

// The user agent WebKitGTK sends, with its version added as an embedder
// adds its own: the library's own string says `Version/60.5`, a constant,
// so a page could not tell WebKitGTK 2.50 from 2.44 (web/src/platform.rs).
function userAgent(env) {
  let version = "";
  try {
    // "WebKitGTK 2.50.6"
    const said = execFileSync(MINIBROWSER, ["--version"], { env, encoding: "utf8", timeout: 30000 });
    version = said.match(/WebKitGTK (\d+(\.\d+)*)/)?.[1] ?? "";
  } catch {
    // Unknown: the page says so.
  }
  const machine = { x64: "x86_64", arm64: "aarch64", ia32: "i686" }[arch()] ?? arch();
  return (
    `Mozilla/5.0 (X11; Linux ${machine}) AppleWebKit/605.1.15 (KHTML, like Gecko) ` +
    `Version/60.5 Safari/605.1.15${version ? ` WebKitGTK/${version}` : ""}`
  );
}

export async function open(options, run, onLine) {
  const home = mkdtempSync(join(tmpdir(), "lockstep-webkit-"));
  run.dirs.push(home);
  const runtime = join(home, "run");
  mkdirSync(runtime, { mode: 0o700 });
  // Xvfb picks a free display and writes its number on fd 3.
  const xvfb = spawn(
    process.env.XVFB || "Xvfb",
    ["-displayfd", "3", "-screen", "0", `${options.width}x${options.height}x24`, "-nolisten", "tcp"],
    { stdio: ["ignore", "ignore", "ignore", "pipe"], detached: true },
  );
  run.watch(xvfb, "Xvfb");
  const display = `:${await firstMatch(xvfb.stdio[3], /^(\d+)\n/)}`;
  const env = {
    ...process.env,
    DISPLAY: display,
    HOME: home,
    XDG_RUNTIME_DIR: runtime,
    XDG_CACHE_HOME: join(home, "cache"),
    XDG_DATA_HOME: join(home, "data"),
    XDG_CONFIG_HOME: join(home, "config"),
    NO_AT_BRIDGE: "1",
    GTK_A11Y: "none",
    // GL compositing in software halves the frame rate on Xvfb and stalls
    // the game on a loaded machine; the page draws a 2D canvas anyway.
    WEBKIT_DISABLE_COMPOSITING_MODE: process.env.WEBKIT_DISABLE_COMPOSITING_MODE ?? "1",
  };
  delete env.WAYLAND_DISPLAY;
  for (const option of options.engineFlags) {
    const at = option.indexOf("=");
    if (at <= 0) throw new Error(`a WebKit option is an environment variable NAME=VALUE, not ${option}`);
    env[option.slice(0, at)] = option.slice(at + 1);
  }
  const browser = spawn(
    MINIBROWSER,
    [
      "--enable-write-console-messages-to-stdout=true",
      // No toolbar; the window is sized to the screen below (MiniBrowser
      // ignores --geometry, and with no window manager nothing else sizes
      // it).
      "--full-screen",
      `--user-agent=${userAgent(env)}`,
      options.url,
    ],
    { stdio: ["ignore", "pipe", "pipe"], detached: true, env },
  );
  run.watch(browser, "MiniBrowser");
  // The window, once mapped, gets exactly the screen: the page's size is
  // --size, as in the other engines.
  const sizer = spawn(
    "xdotool",
    ["search", "--sync", "--onlyvisible", "--class", "MiniBrowser",
     "windowmove", "%@", "0", "0", "windowsize", "%@", String(options.width), String(options.height)],
    { stdio: "ignore", env },
  );
  sizer.on("error", () => console.log("driver xdotool is missing: the WebKit window keeps its own size"));
  run.navigated();
  const console_ = /^.*?:\d+:\d+: CONSOLE (JS ERROR|[A-Z]+) (.*)$/;
  // A console line, and the next lines of a message of several, which
  // follow it on the same stream without a prefix; GLib's and GTK's own
  // warnings (`(MiniBrowser:123): Gtk-WARNING ...`, `** ...`) are not
  // the page's.
  const follow = (input) => {
    let inMessage = false;
    createInterface({ input }).on("line", (raw) => {
      if (process.env.DRIVER_STDERR) process.stderr.write(`${raw}\n`);
      const match = raw.match(console_);
      if (match) {
        inMessage = true;
        onLine(match[1] === "JS ERROR" ? `page error: ${match[2]}` : match[2]);
      } else if (inMessage && !/^(\(\S+:\d+\)|\*\*|\[)/.test(raw)) {
        onLine(raw);
      } else {
        inMessage = false;
      }
    });
  };
  follow(browser.stdout);
  follow(browser.stderr);

  return {
    screenshot(file) {
      return new Promise((resolve, reject) => {
        const grab = spawn(
          "sh",
          ["-c", `xwd -root -silent -display ${display} | xwdtopnm 2>/dev/null | pnmtopng > "$0"`, file],
          { stdio: "ignore" },
        );
        grab.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`xwd exited with ${code}`))));
      });
    },
  };
}
