// What the bench and the soak do around their measures: a header line naming the machine and its
// load, a fresh temporary work dir, and one clean-up (servers stopped, the dir removed, and what
// the caller adds) whether the run ends, fails or is interrupted.
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { PKG } from "./config.mjs";
import { stopAll } from "./processes.mjs";
import { gitState } from "./setup.mjs";

/**
 * Runs `body(workDir)` between the header and the clean-up; `alsoCleanUp` runs before the dir
 * goes. Exits 1 (through process.exitCode) only when something could not be measured.
 */
export async function harness(kind, body, alsoCleanUp = async () => {}) {
  let workDir;
  let cleaningUp;
  const cleanUp = () => {
    cleaningUp ??= (async () => {
      await stopAll();
      await alsoCleanUp();
      if (workDir) await rm(workDir, { recursive: true, force: true });
    })();
    return cleaningUp;
  };
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: stopping the servers\n`);
      cleanUp().finally(() => process.exit(130));
    });
  }
  const startedAt = Date.now();
  try {
    const cpu = cpus();
    console.log(
      `bizctl ${PKG.version} ${kind} · node ${process.version} · ${cpu.length} x ${cpu[0]?.model ?? "cpu"} · ${process.platform}/${process.arch} · load ${loadavg()[0].toFixed(1)} · git ${gitState()}`,
    );
    workDir = await mkdtemp(join(tmpdir(), `bizctl-${kind}-`));
    await body(workDir);
    console.log(`\n(total ${((Date.now() - startedAt) / 1000).toFixed(0)} s, load ${loadavg()[0].toFixed(1)})`);
  } catch (error) {
    console.error(`\n${kind} failed: ${error?.stack ?? error}`);
    process.exitCode = 1;
  } finally {
    await cleanUp();
  }
}
