import { spawnSync } from "node:child_process";

/**
 * A python3 that can import `modules`: $BIZCTL_PYTHON, python3 on the PATH, or Debian's
 * /usr/bin/python3 (where apt installs the clients we test against); undefined when none can.
 */
export function findPython(modules: string[]): string | undefined {
  const candidates = [process.env.BIZCTL_PYTHON, "python3", "/usr/bin/python3"].filter((c): c is string => !!c);
  for (const candidate of candidates) {
    const probe = spawnSync(candidate, ["-c", `import ${modules.join(", ")}`], { stdio: "ignore" });
    if (probe.status === 0) return candidate;
  }
  return undefined;
}
