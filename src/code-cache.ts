/**
 * Loads the CLI's bundles with V8's code cache. Node 20 caches no compiled code for files it
 * loads (Node 22's module.enableCompileCache() came later), so every command parsed and compiled
 * megabytes of bundled JavaScript again: a third of the instructions of an embedded `events list`.
 * A bundle compiled through vm.Script can be handed the code V8 produced for it last time;
 * the cache is written after a command whose bundle had none (or one V8 refused), and holds every
 * function that command ran, so the next command skips parsing and compiling them.
 *
 * The bundles (scripts/build.mjs) are CommonJS functions `(function (exports, require, module,
 * __filename, __dirname) {...})`, named by a hash of their content, and dist/bundles.json names
 * the current ones: a rebuilt bundle has a new name, so no cache of an older build is ever offered
 * for it. V8 checks the rest itself (its version, its flags, the source's length) and refuses a
 * cache that does not match; the command then compiles as without one and writes a new cache.
 *
 * The cache lives in $XDG_CACHE_HOME/bizctl (default ~/.cache/bizctl), one file per bundle and
 * Node version. NODE_DISABLE_COMPILE_CACHE=1, the variable Node's own compile cache reads, turns
 * it off. A cache that cannot be read or written only costs the time it would have saved.
 */
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";
import { Script } from "node:vm";

interface Loaded {
  script: Script;
  /** the cache file to write after the command, when V8 had no usable cache for the bundle */
  writeTo?: string;
  bundle: string;
}

const loaded: Loaded[] = [];
let manifest: Record<string, string> | undefined;

function cacheDir(): string | undefined {
  const env = process.env;
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "bizctl");
}

/** The cache file of a bundle under this Node (V8 would refuse another version's cache anyway). */
function cacheFile(dir: string, bundle: string): string {
  return join(dir, `${bundle}.node-${process.version}-${process.arch}.v8`);
}

/**
 * A buffer that each read of a bundle (or of a cache) reuses: memory a process touches for the
 * first time costs a page fault per 4 KiB, which on the VMs measured here made reading the two
 * bundles and their caches into fresh buffers cost more than the disk. The server bundle's read
 * lands on the pages the CLI's already faulted in. Pages never touched cost nothing, so the
 * buffer starts large enough for both.
 */
class ReadBuffer {
  private buffer: Buffer | undefined;

  /** The file's bytes, valid until the next read into this buffer. */
  read(file: string): Buffer {
    const fd = openSync(file, "r");
    try {
      const size = fstatSync(fd).size;
      if (!this.buffer || this.buffer.length < size) this.buffer = Buffer.allocUnsafeSlow(Math.max(size, 4 << 20));
      let done = 0;
      while (done < size) {
        const n = readSync(fd, this.buffer, done, size - done, done);
        if (n === 0) break;
        done += n;
      }
      return this.buffer.subarray(0, done);
    } finally {
      closeSync(fd);
    }
  }
}

const sources = new ReadBuffer();
const caches = new ReadBuffer();

function readCache(file: string): Buffer | undefined {
  try {
    return caches.read(file);
  } catch {
    return undefined;
  }
}

/**
 * Runs the bundle built for `role` ("cli", "server") in this process and returns its exports;
 * `distDir` holds the bundles and bundles.json.
 */
export function loadBundle(distDir: string, role: string): Record<string, unknown> {
  manifest ??= JSON.parse(readFileSync(join(distDir, "bundles.json"), "utf8")) as Record<string, string>;
  const bundle = manifest[role];
  if (!bundle) throw new Error(`dist/bundles.json names no ${role} bundle: run npm run build`);
  const filename = join(distDir, bundle);
  const dir = cacheDir();
  const cacheAt = dir && cacheFile(dir, bundle);
  const cachedData = cacheAt ? readCache(cacheAt) : undefined;
  // the bundles are ASCII (scripts/build.mjs), which latin1 reads a third faster than UTF-8;
  // V8 takes what it needs of the cache while it compiles, so both buffers are free after it
  const script = new Script(sources.read(filename).toString("latin1"), { filename, cachedData });
  const usable = cachedData !== undefined && !script.cachedDataRejected;
  loaded.push({ script, bundle, writeTo: cacheAt && !usable ? cacheAt : undefined });
  const module = { exports: {} as Record<string, unknown> };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, createRequire(filename), module, filename, distDir);
  return module.exports;
}

/**
 * Writes the caches the bundles loaded in this process lacked. Called once the command is done,
 * so that the cache holds the functions it ran; written whole or not at all (a rename), so that
 * concurrent commands never read half a file.
 */
export function saveCodeCaches(): void {
  for (const { script, writeTo, bundle } of loaded.splice(0)) {
    if (!writeTo) continue;
    try {
      const dir = cacheDir()!;
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const temporary = `${writeTo}.${process.pid}.tmp`;
      writeFileSync(temporary, script.createCachedData(), { mode: 0o600 });
      renameSync(temporary, writeTo);
      dropOldCaches(dir, bundle);
    } catch {
      // a read-only or full disk: the next command compiles, as it would without a cache
    }
  }
}

/** Caches kept for other builds of a bundle: two installed versions used in turn keep theirs. */
const OTHER_BUILDS_KEPT = 3;

/**
 * Removes the caches of the bundle's other builds (upgrades leave them behind) but the most
 * recently written few. A cache in use is never rewritten, so its age says nothing; the worst an
 * eviction does is one more compile and write.
 */
function dropOldCaches(dir: string, bundle: string): void {
  const role = bundle.slice(0, bundle.indexOf("."));
  const others = readdirSync(dir)
    .filter((name) => name.startsWith(`${role}.`) && name.endsWith(".v8") && !name.startsWith(`${bundle}.`))
    .map((name) => ({ name, written: statSync(join(dir, name)).mtimeMs }))
    .sort((a, b) => b.written - a.written);
  for (const { name } of others.slice(OTHER_BUILDS_KEPT)) rmSync(join(dir, name), { force: true });
}
