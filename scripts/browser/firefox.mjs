// Firefox (Debian's `firefox-esr`), headless, through the WebDriver BiDi
// server built into it (no geckodriver): the page's console calls and
// uncaught errors, and screenshots. Engine options are preferences
// (`NAME=VALUE`, written to the profile's user.js). Used by drive.mjs.

import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { connect, firstMatch } from "./common.mjs";

// A fresh profile: no first-run screens, no session restore (a reused
// profile would load the page twice), no throttled timers.
const PREFERENCES = {
  "browser.shell.checkDefaultBrowser": false,
  "browser.startup.homepage_override.mstone": "ignore",
  "browser.sessionstore.resume_from_crash": false,
  "browser.aboutwelcome.enabled": false,
  "datareporting.policy.dataSubmissionEnabled": false,
  "toolkit.telemetry.reportingpolicy.firstRun": false,
  "app.update.enabled": false,
  "dom.timeout.enable_budget_timer_throttling": false,
  "dom.min_background_timeout_value": 4,
};

// A preference's value as user.js writes it.
function literal(value) {
  if (typeof value !== "string") return String(value);
  if (value === "true" || value === "false" || /^-?\d+$/.test(value)) return value;
  return JSON.stringify(value);
}

export async function open(options, run, onLine) {
  const profile = mkdtempSync(join(tmpdir(), "lockstep-firefox-"));
  run.dirs.push(profile);
  const preferences = { ...PREFERENCES };
  for (const option of options.engineFlags) {
    const at = option.indexOf("=");
    if (at <= 0) throw new Error(`a Firefox option is a preference NAME=VALUE, not ${option}`);
    preferences[option.slice(0, at)] = option.slice(at + 1);
  }
  writeFileSync(
    join(profile, "user.js"),
    Object.entries(preferences)
      .map(([name, value]) => `user_pref(${JSON.stringify(name)}, ${literal(value)});\n`)
      .join(""),
  );
  const browser = spawn(
    process.env.FIREFOX || "firefox-esr",
    [
      "--headless",
      "--no-remote",
      "--profile",
      profile,
      "--remote-debugging-port=0",
      `--width=${options.width}`,
      `--height=${options.height}`,
      "about:blank",
    ],
    { stdio: ["ignore", "ignore", "pipe"], detached: true, env: { ...process.env, MOZ_HEADLESS: "1" } },
  );
  run.watch(browser, "firefox");
  const bidi = await firstMatch(browser.stderr, /WebDriver BiDi listening on (ws:\/\/\S+)/);

  const remote = (value) => {
    if (!value) return "";
    if ("value" in value && (typeof value.value !== "object" || value.value === null)) {
      return String(value.value);
    }
    return value.type;
  };
  const session = await connect(`${bidi}/session`, "Firefox's WebDriver BiDi", run, (message) => {
    if (message.method !== "log.entryAdded") return;
    const entry = message.params;
    if (entry.type === "console") {
      const text = entry.args?.length ? entry.args.map(remote).join(" ") : entry.text;
      for (const line of String(text).split("\n")) onLine(line);
    } else {
      onLine(`page error: ${String(entry.text).split("\n")[0]}`);
    }
  });
  const send = (method, params = {}) =>
    session.send(method, params, (m) => (m.type === "error" ? `${m.error} ${m.message}` : null));

  await send("session.new", { capabilities: {} });
  await send("session.subscribe", { events: ["log.entryAdded"] });
  const tree = await send("browsingContext.getTree", {});
  const context = tree.contexts[0].context;
  await send("browsingContext.setViewport", {
    context,
    viewport: { width: options.width, height: options.height },
  });
  run.navigated();
  await send("browsingContext.navigate", { context, url: options.url, wait: "none" });

  return {
    async screenshot(file) {
      const { data } = await send("browsingContext.captureScreenshot", { context });
      writeFileSync(file, Buffer.from(data, "base64"));
    },
  };
}
