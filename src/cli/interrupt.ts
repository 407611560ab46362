/**
 * Ctrl-C (SIGINT) and SIGTERM noted rather than obeyed at once, so that a long read stops between
 * two pages and says where to resume. The CLI's own SIGINT handlers are set aside meanwhile;
 * a second signal still ends the process at once (exit 130).
 */
export interface Interrupt {
  readonly stopped: boolean;
  /** puts the previous handlers back */
  release(): void;
}

export function noteInterrupt(): Interrupt {
  let stopped = false;
  const stop = () => {
    if (stopped) process.exit(130);
    stopped = true;
  };
  const previous = process.listeners("SIGINT");
  process.removeAllListeners("SIGINT");
  process.on("SIGINT", stop);
  process.once("SIGTERM", stop);
  return {
    get stopped() {
      return stopped;
    },
    release() {
      process.removeListener("SIGINT", stop);
      process.removeListener("SIGTERM", stop);
      for (const listener of previous) process.on("SIGINT", listener);
    },
  };
}
