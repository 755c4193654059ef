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

import init, { Peer, simulate } from "./lockstep_web.js";

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
  peer = new Peer(location.search, name, browser, performance.now());
  flush();
}

// `?sim=TICKS[&players=P&seed=S&balls=B]`: the ball game offline, as
// `lockstep-client sim` runs it, timed; no server involved.
function benchmark() {
  const number = (key, fallback) => Number(params.get(key) ?? fallback);
  const [players, seed, balls, ticks] = [number("players", 4), number("seed", 1), number("balls", 24), number("sim", 600)];
  const start = performance.now();
  const line = simulate(players, seed, balls, ticks);
  const ms = performance.now() - start;
  console.log(`sim players=${players} seed=${seed} balls=${balls} ticks=${ticks} ms=${ms.toFixed(1)} ticks_per_s=${Math.round((ticks * 1000) / ms)}`);
  console.log(line);
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

function circle(x, y, r, fill) {
  ctx.beginPath();
  ctx.arc(x, y, r, 0, Math.PI * 2);
  ctx.fillStyle = fill;
  ctx.fill();
}

function darker(hex) {
  const n = parseInt(hex.slice(1), 16);
  const shade = (c) => Math.floor((c * 55) / 100);
  return `rgb(${shade(n >> 16)}, ${shade((n >> 8) & 255)}, ${shade(n & 255)})`;
}

const MARGIN = 48;
const WALL = 8;
const GOAL_DEPTH = 36;

function drawBalls(scene, s, dpr) {
  const [, w, h, top, bottom, balls, discs] = scene;
  const scale = Math.min(canvas.width / (w + 2 * MARGIN), canvas.height / (h + 2 * MARGIN));
  ctx.setTransform(scale, 0, 0, scale, (canvas.width - w * scale) / 2, (canvas.height - h * scale) / 2);
  ctx.fillStyle = "#14161e";
  ctx.fillRect(-MARGIN, -MARGIN, w + 2 * MARGIN, h + 2 * MARGIN);
  ctx.fillStyle = "#1e2432";
  ctx.fillRect(0, 0, w, h);
  ctx.strokeStyle = "#3e4860";
  ctx.lineWidth = 3;
  ctx.beginPath();
  ctx.moveTo(w / 2, 0);
  ctx.lineTo(w / 2, h);
  ctx.stroke();
  ctx.beginPath();
  ctx.arc(w / 2, h / 2, 110, 0, Math.PI * 2);
  ctx.stroke();
  circle(w / 2, h / 2, 6, "#3e4860");
  for (const [line, out] of [[0, -1], [w, 1]]) {
    const x = out < 0 ? line - GOAL_DEPTH : line;
    ctx.fillStyle = "rgba(255, 196, 40, 0.35)";
    ctx.fillRect(x, top, GOAL_DEPTH, bottom - top);
    ctx.fillStyle = "#ffc428";
    ctx.fillRect(x - (out < 0 ? 3 : 0), top - 3, GOAL_DEPTH + 3, 3);
    ctx.fillRect(x - (out < 0 ? 3 : 0), bottom, GOAL_DEPTH + 3, 3);
    ctx.fillRect(out < 0 ? x - 3 : x + GOAL_DEPTH, top, 3, bottom - top);
  }
  ctx.fillStyle = "#aab2c4";
  ctx.fillRect(-WALL, -WALL, w + 2 * WALL, WALL);
  ctx.fillRect(-WALL, h, w + 2 * WALL, WALL);
  for (const x of [-WALL, w]) {
    ctx.fillRect(x, 0, WALL, top);
    ctx.fillRect(x, bottom, WALL, h - bottom);
  }
  for (const [x, y] of [[0, top], [0, bottom], [w, top], [w, bottom]]) circle(x, y, 7, "#ffc428");
  let i = 7;
  for (let b = 0; b < balls; b++, i += 3) {
    circle(scene[i], scene[i + 1], scene[i + 2], "#786838");
    circle(scene[i], scene[i + 1], scene[i + 2] - 2, "#faf2cd");
  }
  const names = new Map(s.players.map((p) => [p.id, p.name]));
  const labels = [];
  for (let d = 0; d < discs; d++, i += 4) {
    const [x, y, r, id] = [scene[i], scene[i + 1], scene[i + 2], scene[i + 3]];
    const mine = id === s.player;
    circle(x, y, r, mine ? "#ffffff" : darker(colour(id)));
    circle(x, y, r - (mine ? 5 : 3), colour(id));
    labels.push([x, y - r - 8, names.get(id) || `player ${id}`, id]);
  }
  ctx.font = "600 22px system-ui, sans-serif";
  ctx.textAlign = "center";
  ctx.textBaseline = "bottom";
  for (const [x, y, name, id] of labels) {
    ctx.fillStyle = "rgba(0, 0, 0, 0.6)";
    ctx.fillText(name, x + 1.5, y + 1.5);
    ctx.fillStyle = colour(id);
    ctx.fillText(name, x, y);
  }
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  drawScores(s, dpr);
}

function drawTally(scene, s, dpr) {
  const w = 1600;
  const h = 900;
  const scale = Math.min(canvas.width / (w + 2 * MARGIN), canvas.height / (h + 2 * MARGIN));
  ctx.setTransform(scale, 0, 0, scale, (canvas.width - w * scale) / 2, (canvas.height - h * scale) / 2);
  ctx.fillStyle = "#1e2432";
  ctx.fillRect(0, 0, w, h);
  const n = scene[1];
  const slot = w / Math.max(n, 1);
  const names = new Map(s.players.map((p) => [p.id, p.name]));
  ctx.font = "600 28px system-ui, sans-serif";
  ctx.textAlign = "center";
  ctx.textBaseline = "bottom";
  for (let c = 0, i = 2; c < n; c++, i += 3) {
    const [id, speed, count] = [scene[i], scene[i + 1], scene[i + 2]];
    const top = h * (1 - speed);
    ctx.fillStyle = colour(id);
    ctx.fillRect(slot * c + slot * 0.2, top, slot * 0.6, h - top);
    ctx.fillText(`${names.get(id) || id} ${count}`, slot * (c + 0.5), Math.max(top - 8, 36));
  }
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  drawScores(s, dpr);
}

// Topple's view, in metres, x right and y up: what the native window
// shows (window/src/games/physics.rs), with a metre around it.
const PHYSICS_VIEW = { left: -24, top: 17, width: 48, height: 27, margin: 1 };
// Half the platform's thickness (games/topple/src/arena.rs).
const PLATFORM_HALF_HEIGHT = 0.5;
const PHYSICS_COLOURS = {
  sky: "#1e2432",
  pit: "#12141c",
  platform: "#606878",
  crate: "#c4965c",
  ball: "#96bed2",
};

// A body's own frame, turned by (cos, sin) about (x, y), in world units.
function turned(x, y, cos, sin, draw) {
  ctx.save();
  ctx.transform(cos, sin, -sin, cos, x, y);
  draw();
  ctx.restore();
}

// A ball (or a ram) with a spoke, so a rolling ball is seen to turn.
function spokedBall(x, y, cos, sin, r, fill, edge) {
  circle(x, y, r, fill);
  ctx.strokeStyle = edge;
  ctx.beginPath();
  ctx.arc(x, y, r, 0, Math.PI * 2);
  ctx.moveTo(x, y);
  ctx.lineTo(x + r * cos, y + r * sin);
  ctx.stroke();
}

function drawPhysics(scene, s, dpr) {
  const [, half, crate, ball, ram, bodies] = scene;
  const { left, top, width, height, margin } = PHYSICS_VIEW;
  const scale = Math.min(canvas.width / (width + 2 * margin), canvas.height / (height + 2 * margin));
  const ox = (canvas.width - width * scale) / 2 - left * scale;
  const oy = (canvas.height - height * scale) / 2 + top * scale;
  // World units from here on, y up.
  ctx.setTransform(scale, 0, 0, -scale, ox, oy);
  ctx.lineWidth = (1.5 * dpr) / scale;
  ctx.fillStyle = PHYSICS_COLOURS.sky;
  ctx.fillRect(left, 0, width, top);
  ctx.fillStyle = PHYSICS_COLOURS.pit;
  ctx.fillRect(left, top - height, width, height - top);
  // Bodies flying past the view's edges vanish there.
  ctx.save();
  ctx.beginPath();
  ctx.rect(left, top - height, width, height);
  ctx.clip();
  const rams = [];
  for (let b = 0, i = 6; b < bodies; b++, i += 6) {
    const [kind, x, y, cos, sin, id] = scene.slice(i, i + 6);
    if (kind === 0) {
      turned(x, y, cos, sin, () => {
        ctx.fillStyle = PHYSICS_COLOURS.platform;
        ctx.fillRect(-half, -PLATFORM_HALF_HEIGHT, 2 * half, 2 * PLATFORM_HALF_HEIGHT);
      });
    } else if (kind === 1) {
      turned(x, y, cos, sin, () => {
        ctx.fillStyle = PHYSICS_COLOURS.crate;
        ctx.fillRect(-crate, -crate, 2 * crate, 2 * crate);
        ctx.strokeStyle = darker(PHYSICS_COLOURS.crate);
        ctx.strokeRect(-crate, -crate, 2 * crate, 2 * crate);
      });
    } else if (kind === 2) {
      spokedBall(x, y, cos, sin, ball, PHYSICS_COLOURS.ball, darker(PHYSICS_COLOURS.ball));
    } else {
      rams.push([x, y, cos, sin, id]);
    }
  }
  // Rams over the piles, names over the rams.
  for (const [x, y, cos, sin, id] of rams) {
    spokedBall(x, y, cos, sin, ram, colour(id), darker(colour(id)));
    if (id === s.player) {
      // One's own ram, ringed as the window rings it.
      ctx.strokeStyle = "#ffffff";
      ctx.beginPath();
      ctx.arc(x, y, ram + 0.25, 0, Math.PI * 2);
      ctx.stroke();
    }
  }
  ctx.restore();
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  const names = new Map(s.players.map((p) => [p.id, p.name]));
  ctx.font = `600 ${Math.round(Math.max(12 * dpr, 0.7 * scale))}px system-ui, sans-serif`;
  ctx.textAlign = "center";
  ctx.textBaseline = "bottom";
  for (const [x, y, , , id] of rams) {
    const name = names.get(id) || `player ${id}`;
    const [sx, sy] = [ox + x * scale, oy - (y + ram) * scale - 4 * dpr];
    ctx.fillStyle = "rgba(0, 0, 0, 0.6)";
    ctx.fillText(name, sx + 1.5 * dpr, sy + 1.5 * dpr);
    ctx.fillStyle = colour(id);
    ctx.fillText(name, sx, sy);
  }
  drawScores(s, dpr);
}

function drawScores(s, dpr) {
  // Tally shows its counts on its bars.
  if (s.game === "tally" || s.players.length === 0) return;
  ctx.font = `600 ${Math.round(16 * dpr)}px system-ui, sans-serif`;
  ctx.textBaseline = "top";
  ctx.textAlign = "left";
  const parts = s.players.map((p) => [`${p.name} ${p.score}`, colour(p.id)]);
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
  const scene = peer.scene();
  if (scene[0] === 0) drawBalls(scene, state, dpr);
  else if (scene[0] === 1) drawTally(scene, state, dpr);
  else if (scene[0] === 2) drawPhysics(scene, state, dpr);
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

async function main() {
  const [info] = await Promise.all([browserInfo(), init()]);
  browser = info;
  if (params.has("sim")) {
    benchmark();
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
