// The page of the browser peer: it owns the WebSocket, the timers, the
// canvas and the input devices, and hands everything that happens to the
// peer (compiled from web/src) with performance.now(). The peer decides;
// this file only carries out what it asks (open, send, close), prints its
// lines and draws its state.
//
// The lockstep clock does not depend on drawing: the game is pumped from a
// timer of a few milliseconds and from every message, and the peer catches
// up any ticks it owes when the page wakes. requestAnimationFrame only
// draws (between the last two ticks, at the peer's alpha).

// The wasm module, loaded by load(): lockstep_web (every game) or a
// lighter one that has the games this page needs.
let wasm = null;

const PUMP_MS = 4;
const BUTTON = { up: 1, down: 2, left: 4, right: 8, boost: 16 };
// The players' colours, by slot: the native window's palette.
const PALETTE = ["#ff5252", "#409cff", "#50dc64", "#be6eff", "#00dcdc", "#ff78c8", "#ff8c28", "#aae628"];
const KEYS = {
  KeyW: BUTTON.up, ArrowUp: BUTTON.up, KeyS: BUTTON.down, ArrowDown: BUTTON.down,
  KeyA: BUTTON.left, ArrowLeft: BUTTON.left, KeyD: BUTTON.right, ArrowRight: BUTTON.right,
  Space: BUTTON.boost, ShiftLeft: BUTTON.boost,
};
const ADJECTIVES = ["brave", "calm", "swift", "lucky", "bright", "merry", "quiet", "bold", "jolly", "keen"];
const ANIMALS = ["otter", "falcon", "panda", "gecko", "heron", "koala", "lynx", "puffin", "yak", "zebra"];

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const colour = (id) => PALETTE[id % PALETTE.length];

let peer = null;
let socket = null;
let state = null;
let browser = "{}";

// ---- the peer and its WebSocket ----

function flush() {
  if (!peer) return;
  for (let op = peer.next_op(); op !== undefined; op = peer.next_op()) {
    if (op.kind === 0) open();
    else if (op.kind === 1) send(op.bytes);
    else close(op.code, op.reason);
    op.free();
  }
  for (let line = peer.next_line(); line !== undefined; line = peer.next_line()) console.log(line);
}

function open() {
  drop();
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
  ws.binaryType = "arraybuffer";
  socket = ws;
  ws.onopen = () => {
    if (ws !== socket) return;
    peer.opened(performance.now());
    flush();
  };
  ws.onmessage = (event) => {
    if (ws !== socket || !(event.data instanceof ArrayBuffer)) return;
    peer.received(new Uint8Array(event.data), performance.now());
    flush();
  };
  ws.onclose = (event) => {
    if (ws !== socket) return;
    socket = null;
    peer.closed(event.code, event.reason, performance.now());
    flush();
  };
}

function send(bytes) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(bytes);
}

function close(code, reason) {
  const ws = socket;
  socket = null;
  if (!ws) return;
  try {
    ws.close(code, reason);
  } catch {
    ws.close();
  }
}

// Forgets the WebSocket in use without telling the peer (a new one opens).
function drop() {
  if (socket) close(1000, "");
}

function join(name) {
  if (peer) {
    // Leave as ourselves first: the server frees the name and the slot.
    peer.leave();
    flush();
    peer.free();
  }
  drop();
  peer = new wasm.Peer(location.search, name, browser, performance.now());
  flush();
}

// `?sim=TICKS[&game=G&set=K=V&players=P&seed=S]`: a game offline (the
// first of the list unless named), as `lockstep-client sim` runs it,
// timed; no server involved.
function benchmark() {
  const number = (key, fallback) => Number(params.get(key) ?? fallback);
  const [players, seed, ticks] = [number("players", 4), params.get("seed") ?? "1", number("sim", 600)];
  const [game, settings] = [params.get("game") ?? "", params.getAll("set").join(",")];
  const start = performance.now();
  const line = wasm.simulate(game, settings, players, seed, ticks);
  const ms = performance.now() - start;
  console.log(`sim game=${game || "first"} set=${settings} players=${players} seed=${seed} ticks=${ticks} ms=${ms.toFixed(1)} ticks_per_s=${Math.round((ticks * 1000) / ms)}`);
  console.log(line);
}

// `?row=GAME,PLAYERS,SEED,KEY=VALUE,TICKS` (repeated): golden rows
// offline, one after another in this page's engine, each printed as its
// `row N ...` timing line and its `final` line, then `rows done`; no
// server involved (scripts/engine-matrix.sh runs every golden row so).
function rows() {
  params.getAll("row").forEach((row, index) => {
    const [game, players, seed, setting, ticks] = row.split(",");
    const start = performance.now();
    const line = wasm.simulate(game, setting ?? "", Number(players), seed, Number(ticks));
    const ms = performance.now() - start;
    console.log(`row ${index} game=${game} ms=${ms.toFixed(1)} ticks_per_s=${Math.round((Number(ticks) * 1000) / ms)}`);
    console.log(line);
  });
  console.log("rows done");
}

// `?boundary=1`: NaNs with payloads (f32 and f64, quiet and signalling,
// negative), infinities and -0 fed through the page's stick into a ball
// game, each against the game with the stick at rest or held at 0.8: a
// value that is not a number must reach the game as 0 in every engine,
// whatever the engine does to its payload on the way. Prints one
// `boundary` line per value and `boundary done same=N differ=M`.
function boundary() {
  const f32 = (bits) => new Float32Array(new Uint32Array([bits]).buffer)[0];
  const f64 = (bits) => new Float64Array(new BigUint64Array([bits]).buffer)[0];
  const values = {
    "f32:7fc00000": f32(0x7fc00000),
    "f32:7fc01234": f32(0x7fc01234),
    "f32:ffc00001": f32(0xffc00001),
    "f32:7f800001": f32(0x7f800001),
    "f64:7ff8000000001234": f64(0x7ff8000000001234n),
    "f64:fff0000000000001": f64(0xfff0000000000001n),
    "f64:7ff4000000000000": f64(0x7ff4000000000000n),
    "NaN": NaN,
    "Infinity": Infinity,
    "-Infinity": -Infinity,
  };
  const play = (x, y) => wasm.simulate_stick("balls", "balls=24", 2, "5", 120, x, y);
  const atRest = play(0, 0);
  const held = play(0, 0.8);
  console.log(`boundary at_rest ${atRest}`);
  console.log(`boundary held ${held}`);
  let same = 0;
  let differ = 0;
  for (const [name, value] of Object.entries(values)) {
    for (const [stick, expected, x, y] of [["nan,nan", atRest, value, value], ["nan,0.8", held, value, 0.8]]) {
      const line = play(x, y);
      const verdict = line === expected ? "same" : "differs";
      if (line === expected) same++;
      else differ++;
      console.log(`boundary value=${name} stick=${stick} ${verdict} ${line}`);
    }
  }
  const negativeZero = play(-0, 0.8);
  if (negativeZero === held) same++;
  else differ++;
  console.log(`boundary value=-0 stick=-0,0.8 ${negativeZero === held ? "same" : "differs"} ${negativeZero}`);
  console.log(`boundary done same=${same} differ=${differ}`);
}

function pump() {
  if (!peer) return;
  sampleInput();
  peer.pump(performance.now());
  flush();
}

// ---- input: keyboard, game controller, touch ----

const held = new Set();
const touch = { stick: null, x: 0, y: 0, boost: null, shown: false };
let lastInput = "";

addEventListener("keydown", (event) => {
  if (event.target instanceof HTMLInputElement) return;
  if (KEYS[event.code] !== undefined) {
    held.add(event.code);
    event.preventDefault();
  }
});
addEventListener("keyup", (event) => held.delete(event.code));
addEventListener("blur", () => held.clear());

function gamepad() {
  const pads = navigator.getGamepads ? navigator.getGamepads() : [];
  for (const pad of pads) {
    if (!pad || !pad.connected) continue;
    const pressed = (i) => pad.buttons[i] && pad.buttons[i].pressed;
    let buttons = 0;
    if (pressed(12)) buttons |= BUTTON.up;
    if (pressed(13)) buttons |= BUTTON.down;
    if (pressed(14)) buttons |= BUTTON.left;
    if (pressed(15)) buttons |= BUTTON.right;
    if (pressed(0)) buttons |= BUTTON.boost;
    return { buttons, x: pad.axes[0] || 0, y: pad.axes[1] || 0 };
  }
  return null;
}

function sampleInput() {
  let buttons = 0;
  for (const code of held) buttons |= KEYS[code] || 0;
  if (touch.boost !== null) buttons |= BUTTON.boost;
  let stick = null;
  const pad = gamepad();
  if (pad) {
    buttons |= pad.buttons;
    // The peer applies the dead zone: inside it the buttons steer.
    stick = [pad.x, pad.y];
  }
  if (touch.stick !== null) stick = [touch.x, touch.y];
  const key = `${buttons} ${stick}`;
  if (key === lastInput) return;
  lastInput = key;
  peer.set_input(buttons, stick ? stick[0] : 0, stick ? stick[1] : 0, stick !== null);
}

const STICK_REACH = 60;

function stickCentre() {
  const r = $("stick").getBoundingClientRect();
  return [r.left + r.width / 2, r.top + r.height / 2];
}

function moveStick(t) {
  const [cx, cy] = stickCentre();
  let dx = t.clientX - cx;
  let dy = t.clientY - cy;
  const length = Math.hypot(dx, dy);
  if (length > STICK_REACH) {
    dx *= STICK_REACH / length;
    dy *= STICK_REACH / length;
  }
  touch.x = dx / STICK_REACH;
  touch.y = dy / STICK_REACH;
  $("knob").style.transform = `translate(${dx}px, ${dy}px)`;
}

function showTouch() {
  touch.shown = true;
  if (state && state.phase === "playing") $("touch").hidden = false;
}

function onTouchStart(event) {
  showTouch();
  if (!state || state.phase !== "playing") return;
  for (const t of event.changedTouches) {
    if (t.clientX < innerWidth / 2 && touch.stick === null) {
      touch.stick = t.identifier;
      moveStick(t);
    } else if (t.clientX >= innerWidth / 2 && touch.boost === null) {
      touch.boost = t.identifier;
      $("boost").classList.add("on");
    }
  }
  event.preventDefault();
  pump();
}

function onTouchMove(event) {
  for (const t of event.changedTouches) if (t.identifier === touch.stick) moveStick(t);
  event.preventDefault();
  pump();
}

function onTouchEnd(event) {
  for (const t of event.changedTouches) {
    if (t.identifier === touch.stick) {
      touch.stick = null;
      touch.x = touch.y = 0;
      $("knob").style.transform = "";
    }
    if (t.identifier === touch.boost) {
      touch.boost = null;
      $("boost").classList.remove("on");
    }
  }
  pump();
}

// ---- the lobby ----

function randomName() {
  const pick = (list) => list[Math.floor(Math.random() * list.length)];
  return `${pick(ADJECTIVES)}-${pick(ANIMALS)}`;
}

function chooseName() {
  let stored = null;
  try {
    stored = localStorage.getItem("lockstep.name");
  } catch {}
  return params.get("name") || stored || randomName();
}

function saveName(name) {
  try {
    localStorage.setItem("lockstep.name", name);
  } catch {}
}

function text(element, value) {
  if (element.textContent !== value) element.textContent = value;
}

let lobbyKey = "";

function drawLobby(s) {
  const status = $("status");
  const waiting = s.lobby ? `waiting for ${s.lobby.needed} players, everyone ready` : "waiting for the server";
  const words = {
    connecting: "Connecting…",
    lobby: s.ready ? `Ready — ${waiting}` : "In the lobby: press Ready when you are",
    playing: "Playing",
    ended: `Ended: ${s.ended || ""}`,
  };
  text(status, words[s.phase]);
  status.classList.toggle("bad", s.phase === "ended");
  const ready = $("ready");
  ready.disabled = s.phase !== "lobby";
  ready.classList.toggle("on", s.ready);
  text(ready, s.ready ? "Ready ✓" : "Ready");
  const key = JSON.stringify([s.lobby, s.player, s.preflight]);
  if (key === lobbyKey) return;
  lobbyKey = key;
  const list = $("players");
  list.replaceChildren();
  for (const p of s.lobby ? s.lobby.players : []) {
    const li = document.createElement("li");
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = colour(p.id);
    const who = document.createElement("span");
    who.className = "who";
    who.textContent = p.id === s.player ? `${p.name} (you)` : p.name;
    const plat = document.createElement("span");
    plat.className = "plat";
    // A browser's wasm32-unknown-unknown/chromium-156/... as wasm32/chromium-156/...,
    // so its browser shows in the room a row has.
    plat.textContent = `${p.platform.replace(/^wasm32-unknown-unknown\//, "wasm32/")} · ${p.ping} ms`;
    plat.title = p.platform;
    const tag = document.createElement("span");
    tag.className = p.ready ? "tag on" : "tag";
    tag.textContent = p.ready ? "ready" : "not ready";
    li.append(swatch, who, plat, tag);
    list.append(li);
  }
  text($("needed"), s.lobby ? `(${s.lobby.players.length} of ${s.lobby.needed})` : "");
  text($("game"), s.lobby ? `${s.lobby.game} at ${s.lobby.tickRate} Hz` : "–");
  const offered = s.preflight.find((t) => t.offered);
  const accepted = s.phase === "lobby" || s.phase === "playing";
  const preflight = $("preflight");
  preflight.replaceChildren();
  for (const t of s.preflight) {
    const span = document.createElement("span");
    span.textContent = `${t.game} ${t.hash.slice(0, 8)}`;
    if (t.offered && accepted) span.className = "ok";
    preflight.append(span, " ");
  }
  if (offered && accepted) preflight.append("— matches the server's");
}

// ---- the game ----

const canvas = $("canvas");
const ctx = canvas.getContext("2d");
const rate = { frames: 0, fps: 0, ticks: 0, ups: 0, since: performance.now(), tick: 0, last: 0 };

function fitCanvas() {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.round(innerWidth * dpr);
  const h = Math.round(innerHeight * dpr);
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
  }
  return dpr;
}

function darker(hex) {
  const n = parseInt(hex.slice(1), 16);
  const shade = (c) => Math.floor((c * 55) / 100);
  return `rgb(${shade(n >> 16)}, ${shade((n >> 8) & 255)}, ${shade(n & 255)})`;
}

// Every game is drawn by drawPicture from the flat list of numbers its
// view answers with (web/src/picture.rs documents the format): the field
// and its margin fitted to the canvas as the native window fits them,
// then each shape in order, in the picture's units, y down.

// The margin around the field: 3% of its width (the window's).
const MARGIN_SHARE = 3 / 100;
// A label's text height, as a share of the field's width (22 units of
// the ball game's 1600), never under 12 CSS pixels.
const LABEL_SHARE = 0.014;

function paintAt(pic, i) {
  const [kind, a, b, c, d] = pic.slice(i, i + 5);
  if (kind === 0) return `rgba(${a}, ${b}, ${c}, ${d / 255})`;
  if (kind === 1) return colour(a);
  if (kind === 2) return darker(colour(a));
  return null;
}

function drawPicture(pic, s, dpr) {
  // No game (yet, or any more): nothing to draw.
  if (pic.length < 4) return;
  const [minX, minY, maxX, maxY] = pic;
  const [w, h] = [maxX - minX, maxY - minY];
  const margin = w * MARGIN_SHARE;
  const scale = Math.min(canvas.width / (w + 2 * margin), canvas.height / (h + 2 * margin));
  const ox = (canvas.width - (w + 2 * margin) * scale) / 2 + (margin - minX) * scale;
  const oy = (canvas.height - (h + 2 * margin) * scale) / 2 + (margin - minY) * scale;
  // A hairline is a pixel while the field and its margin are up to about
  // 720 pixels tall on the canvas, a whole number more per 720 beyond, as
  // in the window; in picture units from here on.
  const hairline = Math.max(1, Math.round(((h + 2 * margin) * scale) / 720)) / scale;
  const width = (kind, value) => (kind === 1 ? value * hairline : value);
  const names = new Map(s.players.map((p) => [p.id, p.name]));
  const font = Math.round(Math.max(12 * dpr, LABEL_SHARE * w * scale));
  let clipped = false;
  ctx.setTransform(scale, 0, 0, scale, ox, oy);
  for (let i = 4; i < pic.length; ) {
    const op = pic[i];
    if (op === 0) {
      const [x0, y0, x1, y1] = pic.slice(i + 1, i + 5);
      ctx.fillStyle = paintAt(pic, i + 5);
      ctx.fillRect(Math.min(x0, x1), Math.min(y0, y1), Math.abs(x1 - x0), Math.abs(y1 - y0));
      i += 10;
    } else if (op === 1) {
      const [x, y, r] = pic.slice(i + 1, i + 4);
      const fill = paintAt(pic, i + 4);
      const edge = paintAt(pic, i + 9);
      const rim = width(pic[i + 14], pic[i + 15]);
      if (fill !== null && edge !== null) {
        disc(x, y, r, edge);
        disc(x, y, Math.max(r - rim, 0), fill);
      } else if (fill !== null) {
        disc(x, y, r, fill);
      } else if (edge !== null) {
        ctx.strokeStyle = edge;
        ctx.lineWidth = rim;
        ctx.beginPath();
        ctx.arc(x, y, Math.max(r - rim / 2, 0), 0, Math.PI * 2);
        ctx.stroke();
      }
      i += 16;
    } else if (op === 2) {
      const n = pic[i + 1];
      ctx.beginPath();
      for (let k = 0; k < n; k++) ctx.lineTo(pic[i + 2 + 2 * k], pic[i + 3 + 2 * k]);
      ctx.closePath();
      const at = i + 2 + 2 * n;
      ctx.fillStyle = paintAt(pic, at);
      ctx.fill();
      const edge = paintAt(pic, at + 5);
      if (edge !== null) {
        ctx.strokeStyle = edge;
        ctx.lineWidth = width(pic[at + 10], pic[at + 11]);
        ctx.stroke();
      }
      i = at + 12;
    } else if (op === 3) {
      const [x0, y0, x1, y1] = pic.slice(i + 1, i + 5);
      ctx.strokeStyle = paintAt(pic, i + 5);
      ctx.lineWidth = width(pic[i + 10], pic[i + 11]);
      ctx.beginPath();
      ctx.moveTo(x0, y0);
      ctx.lineTo(x1, y1);
      ctx.stroke();
      i += 12;
    } else if (op === 4) {
      const [x, y, id] = pic.slice(i + 1, i + 4);
      const paint = paintAt(pic, i + 4);
      const n = pic[i + 9];
      const words = String.fromCharCode(...pic.slice(i + 10, i + 10 + n));
      const name = id >= 0 ? names.get(id) || `P${id}` : "";
      const line = id < 0 ? words : words === "" ? name : `${name} ${words}`;
      label(line, ox + x * scale, oy + y * scale - 0.3 * font, font, paint);
      ctx.setTransform(scale, 0, 0, scale, ox, oy);
      i += 10 + n;
    } else if (op === 5) {
      if (clipped) ctx.restore();
      clipped = pic[i + 1] === 1;
      if (clipped) {
        const [x0, y0, x1, y1] = pic.slice(i + 2, i + 6);
        ctx.save();
        ctx.beginPath();
        ctx.rect(x0, y0, x1 - x0, y1 - y0);
        ctx.clip();
      }
      i += clipped ? 6 : 2;
    } else {
      console.error(`lockstep-web: picture opcode ${op} at ${i}`);
      break;
    }
  }
  if (clipped) ctx.restore();
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  drawScores(s, dpr);
}

function disc(x, y, r, fill) {
  ctx.beginPath();
  ctx.arc(x, y, r, 0, Math.PI * 2);
  ctx.fillStyle = fill;
  ctx.fill();
}

// A line of text centred on (x, y) in canvas pixels, standing on it, over
// a dark shadow so it reads over anything.
function label(line, x, y, font, paint) {
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.font = `600 ${font}px system-ui, sans-serif`;
  ctx.textAlign = "center";
  ctx.textBaseline = "bottom";
  const shadow = Math.max(1, font / 14);
  ctx.fillStyle = "rgba(0, 0, 0, 0.6)";
  ctx.fillText(line, x + shadow, y + shadow);
  ctx.fillStyle = paint;
  ctx.fillText(line, x, y);
}

function drawScores(s, dpr) {
  // A game that keeps no scores (Tally: its counts stand on its bars)
  // has no strip.
  const scored = s.players.filter((p) => p.score !== null);
  if (scored.length === 0) return;
  ctx.font = `600 ${Math.round(16 * dpr)}px system-ui, sans-serif`;
  ctx.textBaseline = "top";
  ctx.textAlign = "left";
  const parts = scored.map((p) => [`${p.name} ${p.score}`, colour(p.id)]);
  const gap = 24 * dpr;
  const total = parts.reduce((sum, [t]) => sum + ctx.measureText(t).width, 0) + gap * (parts.length - 1);
  let x = (canvas.width - total) / 2;
  ctx.fillStyle = "rgba(10, 12, 18, 0.72)";
  ctx.fillRect(x - 12 * dpr, 6 * dpr, total + 24 * dpr, 28 * dpr);
  for (const [t, c] of parts) {
    ctx.fillStyle = c;
    ctx.fillText(t, x, 11 * dpr);
    x += ctx.measureText(t).width + gap;
  }
}

function drawHud(s) {
  const rtt = s.rttMs > 0 ? `RTT ${s.rttMs.toFixed(1)} ms` : "RTT -";
  const speed = s.speed !== 100 ? `  speed ${s.speed}%` : "";
  const lines = [
    `FPS ${rate.fps.toFixed(1)}  UPS ${rate.ups.toFixed(1)}${speed}`,
    `tick ${s.tick}  delay ${s.delay}`,
    rtt,
    `stalls ${s.stalls}`,
    `hash ${s.hash.slice(0, 8)}`,
  ];
  text($("hud"), lines.join("\n"));
}

function measure(now, s) {
  rate.frames += 1;
  if (s.tick > rate.tick) rate.ticks += s.tick - rate.tick;
  rate.tick = s.tick;
  const span = now - rate.since;
  if (span >= 500) {
    rate.fps = (rate.frames * 1000) / span;
    rate.ups = (rate.ticks * 1000) / span;
    rate.frames = rate.ticks = 0;
    rate.since = now;
  }
  if (rate.last > 0) peer.set_frame_time(now - rate.last);
  rate.last = now;
}

function frame() {
  requestAnimationFrame(frame);
  if (!peer) return;
  pump();
  const now = performance.now();
  state = JSON.parse(peer.state());
  const playing = state.phase === "playing" || (state.phase === "ended" && state.game !== null);
  $("lobby").hidden = playing;
  canvas.hidden = !playing;
  $("hud").hidden = !playing;
  $("touch").hidden = !(playing && touch.shown);
  const banner = state.phase === "ended" && state.game ? `Game over: ${state.ended}` : state.banner;
  $("banner").hidden = !(playing && banner);
  if (banner) text($("banner"), banner);
  if (!playing) {
    drawLobby(state);
    return;
  }
  measure(now, state);
  const dpr = fitCanvas();
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = "#000";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  drawPicture(peer.scene(), state, dpr);
  drawHud(state);
}

// ---- start ----

async function browserInfo() {
  const info = { userAgent: navigator.userAgent, brands: [], platform: "", architecture: "", bitness: "" };
  const data = navigator.userAgentData;
  if (data) {
    info.brands = (data.brands || []).map(({ brand, version }) => ({ brand, version }));
    info.platform = data.platform || "";
    try {
      const high = await data.getHighEntropyValues(["architecture", "bitness", "platformVersion", "fullVersionList"]);
      if (high.fullVersionList) info.brands = high.fullVersionList.map(({ brand, version }) => ({ brand, version }));
      info.architecture = high.architecture || "";
      info.bitness = high.bitness || "";
    } catch {}
  }
  return JSON.stringify(info);
}

// The text of `file` next to the page, or null where there is none.
async function fetchText(file) {
  try {
    const response = await fetch(file, { cache: "no-store" });
    return response.ok ? await response.text() : null;
  } catch {
    return null;
  }
}

// The games this page will play: those of its offline mode (`?sim=`'s
// game, empty for the first of the list, which is the ball game in every
// module; each `?row=`'s; the ball game of `?boundary=`), or the game the
// server hosts (its web door's hosted-game.txt); null when that is not
// known, for a server that does not say it.
async function neededGames() {
  if (params.has("sim")) return [params.get("game") ?? ""].filter((game) => game);
  if (params.has("row")) return params.getAll("row").map((row) => row.split(",")[0]);
  if (params.has("boundary")) return ["balls"];
  const hosted = (await fetchText("hosted-game.txt"))?.trim();
  return hosted ? [hosted] : null;
}

// Loads the lightest module that has every game of `needed`: one that
// modules.json lists with them (the page's light module, a fifth of the
// download), else lockstep_web, which has every game, as does a page
// built from another crate, which has no list.
async function load(needed) {
  let name = "lockstep_web";
  const list = needed && (await fetchText("modules.json"));
  if (list) {
    try {
      const found = JSON.parse(list).find(
        ({ module, games }) => /^[a-z_]+$/.test(module) && Array.isArray(games) && needed.every((game) => games.includes(game)),
      );
      if (found) name = found.module;
    } catch {}
  }
  const module = await import(`./${name}.js`);
  await module.default();
  console.log(`lockstep-web: module ${name} games=${module.games()}`);
  return module;
}

async function main() {
  const [info, module] = await Promise.all([browserInfo(), neededGames().then(load)]);
  browser = info;
  wasm = module;
  if (params.has("sim")) {
    benchmark();
    return;
  }
  if (params.has("row")) {
    rows();
    return;
  }
  if (params.has("boundary")) {
    boundary();
    return;
  }
  const name = chooseName();
  $("name").value = name;
  join(name);
  $("join").addEventListener("submit", (event) => {
    event.preventDefault();
    const next = $("name").value.trim() || randomName();
    $("name").value = next;
    saveName(next);
    join(next);
  });
  $("ready").addEventListener("click", () => {
    if (state) peer.set_ready(!state.ready);
    flush();
  });
  addEventListener("touchstart", onTouchStart, { passive: false });
  addEventListener("touchmove", onTouchMove, { passive: false });
  addEventListener("touchend", onTouchEnd);
  addEventListener("touchcancel", onTouchEnd);
  addEventListener("pagehide", () => {
    if (peer) peer.leave();
    flush();
  });
  touch.shown = navigator.maxTouchPoints > 0 || matchMedia("(pointer: coarse)").matches;
  setInterval(pump, PUMP_MS);
  requestAnimationFrame(frame);
  window.lockstep = {
    state() {
      const s = JSON.parse(peer.state());
      return {
        phase: s.phase,
        tick: s.tick,
        player: s.player,
        lastInput: s.lastInput,
        delay: s.delay,
        stalls: s.stalls,
        hash: s.hash,
      };
    },
    full: () => JSON.parse(peer.state()),
  };
  text($("platform"), JSON.parse(peer.state()).target);
}

main().catch((error) => {
  console.error(`lockstep-web: ${error}`);
  text($("status"), `This page could not start: ${error}`);
  $("status").classList.add("bad");
});
