// Runs a WASI command module under node: `node wasi-run.mjs FILE.wasm ARGS...`.
// The module sees ARGS, the environment, the working directory, and the
// directory of every absolute path among ARGS (so a replay file given by
// path can be read: Debian's wasi-libc does not resolve absolute paths
// against a "/" preopen); its exit code is node's.
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute } from 'node:path';
import { WASI } from 'node:wasi';
import process from 'node:process';

const [wasmPath, ...args] = process.argv.slice(2);
const preopens = { '.': process.cwd() };
for (const arg of args.filter(isAbsolute)) {
  preopens[dirname(arg)] = dirname(arg);
}
const wasi = new WASI({
  version: 'preview1',
  args: ['lockstep-balls', ...args],
  env: process.env,
  preopens,
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(wasmPath));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
