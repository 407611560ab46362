import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";

/**
 * Issue 47 (16): npm 11 lists the packages whose install-time scripts `allowScripts` does not
 * cover, and bizctl's own `prepare` was among them when its tarball was installed. The build runs
 * at `npm pack` (`prepack`), which an install never runs, so the package has none to approve.
 */
const INSTALL_TIME = ["preinstall", "install", "postinstall", "prepare"];

describe("bizctl's own scripts at install time", () => {
  it("has none; the build is prepack's", async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    expect(INSTALL_TIME.filter((name) => name in manifest.scripts)).toEqual([]);
    expect(manifest.scripts.prepack).toBe(manifest.scripts.build);
  });
});
