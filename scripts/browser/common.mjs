// What the engines' drivers share: reading a browser's address off its
// stderr and a JSON-over-WebSocket session (the DevTools protocol and
// WebDriver BiDi both are one).

export const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The first capture of `pattern` in what `stream` prints.
export function firstMatch(stream, pattern) {
  return new Promise((resolve) => {
    let seen = "";
    stream.on("data", (chunk) => {
      const text = chunk.toString();
      if (process.env.DRIVER_STDERR) process.stderr.write(text);
      seen += text;
      const match = seen.match(pattern);
      if (match) {
        resolve(match[1]);
        seen = "";
      }
    });
  });
}

// A session on the WebSocket at `url` (named `what` in errors): commands
// with ids and their answers; every other message goes to onEvent.
// `failed(message)` says whether an answer is an error, and which.
export async function connect(url, what, run, onEvent) {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error(`cannot reach ${what}`));
  });
  let nextId = 1;
  const pending = new Map();
  socket.onclose = () => run.lost(what);
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    const waiting = message.id !== undefined && pending.get(message.id);
    if (!waiting) {
      onEvent(message);
      return;
    }
    pending.delete(message.id);
    const error = waiting.failed(message);
    if (error) waiting.reject(new Error(`${waiting.method}: ${error}`));
    else waiting.resolve(message.result);
  };
  return {
    send(method, params, failed) {
      const id = nextId++;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method, failed }));
    },
  };
}
