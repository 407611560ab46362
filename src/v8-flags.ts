const restores: string[] = [];

// node:v8 is loaded by the few commands that set a flag, not by every command that restores none
const setFlagsFromString = (flags: string) => process.getBuiltinModule("node:v8").setFlagsFromString(flags);

/**
 * Sets V8 flags for the rest of this process. `restore` sets them back to V8's defaults, the
 * flags they imply included: V8 keeps a hash of its flags in every code cache it writes and
 * refuses a cache written under other flags, so the code cache written after a command
 * (code-cache.ts) must see the flags the next command will start with. What a flag implies is
 * what `node --print-flag-values --the-flag -e 0` shows against `node --print-flag-values -e 0`;
 * test/e2e/code-cache.test.ts fails when a restore misses one.
 */
export function setV8Flags(flags: string, restore: string): void {
  setFlagsFromString(flags);
  restores.push(restore);
}

/** the timer of collectTwiceASecond(), until the command ends */
let collector: NodeJS.Timeout | undefined;

/**
 * Puts back V8's defaults for every flag setV8Flags() changed, last changed first, and stops
 * the collections a streaming command asked for (a process running several commands, as the
 * in-process tests do, must not go on collecting a heap of its own size twice a second).
 */
export function restoreV8Flags(): void {
  clearInterval(collector);
  collector = undefined;
  for (const restore of restores.splice(0).reverse()) setFlagsFromString(restore);
}

/**
 * For a command that streams records from start to end (an import, an export, `list --all`): its
 * memory stays flat whatever the number of records. V8 lets a busy heap grow to several times
 * what is live before it collects (a million events would sit at twice the memory of a
 * thousand); `--optimize-for-size` sizes the heap by what is live (the heuristic is read at each
 * GC). And V8 doubles the young generation whenever a busy stretch keeps it full, up to 16 MiB a
 * semi-space: kept at its start size, it is collected more often and more briefly, since nearly
 * everything in it dies young (a batch or a page at a time).
 */
export function keepMemoryFlat(): void {
  setV8Flags("--optimize-for-size", "--no-optimize-for-size --max-semi-space-size=0");
  setV8Flags("--semi-space-growth-factor=1", "--semi-space-growth-factor=2");
  collectTwiceASecond();
}

/**
 * The buffers each page passes through (an HTTP body, an answer of the embedded server) are
 * memory outside V8's heap, and V8 counts it towards a collection only once it has grown by
 * 64 MiB: an export of a million events peaked 1.43x to 1.51x above one of a thousand with the
 * flags above alone; with a full collection every half second (a few milliseconds for the 20 MB
 * heap of such a command), 1.18x embedded and 1.11x remote (`npm run bench`, section 8). The
 * timer does not keep the process alive.
 */
function collectTwiceASecond(): void {
  if (collector) return;
  setV8Flags("--expose-gc", "--no-expose-gc");
  // a context made after the flag is set has gc(); this one was made before
  const collect = process.getBuiltinModule("node:vm").runInNewContext("gc") as () => void;
  collector = setInterval(collect, 500).unref();
}
