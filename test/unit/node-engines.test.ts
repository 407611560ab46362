import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";

/**
 * Issue 32: `npm install` warned that a dependency wants Node 22 (cookie@2 through fastify's
 * light-my-request), while bizctl runs on Node >= 20.19. Every package the lock file installs
 * must take the oldest Node version package.json accepts.
 */

// semver comes with npm's own tree of dependencies; only `satisfies` is needed here
const semver = createRequire(import.meta.url)("semver") as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
};

interface Lock {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
}

describe("the Node versions of the dependencies", () => {
  it("every installed package runs on the oldest Node bizctl supports", async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } };
    const oldest = semver.minVersion(manifest.engines.node)!.version;
    expect(oldest).toBe("20.19.0");
    const lock = JSON.parse(await readFile(join(ROOT, "package-lock.json"), "utf8")) as Lock;
    const refusing = Object.entries(lock.packages)
      .filter(([path]) => path !== "")
      .flatMap(([path, entry]) => {
        const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        return range && !semver.satisfies(oldest, range) ? [`${path}@${entry.version} wants node ${range}`] : [];
      });
    expect(refusing).toEqual([]);
  });
});
