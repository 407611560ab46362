import { statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSealer } from "../../src/server/services/sealing.js";
import { TEST_SECRET_KEY } from "../helpers/postgres.js";

/** The sealer of TOTP seeds: the deployment secret, or on SQLite without one a key file of the data dir. */
describe("sealing what must be read back", () => {
  const dirs: string[] = [];
  afterEach(async () => Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true }))));
  const keyFile = async () => {
    const dir = await mkdtemp(join(tmpdir(), "bizctl-sealing-"));
    dirs.push(dir);
    return join(dir, "keys", "sealing.key");
  };

  it("with the deployment secret: opens with the same context only, and writes no key file", async () => {
    const file = await keyFile();
    const sealer = openSealer({ secretKey: TEST_SECRET_KEY, keyFile: file });
    const sealed = sealer.seal("JBSWY3DPEHPK3PXP", "totp:user-1");
    expect(sealed).not.toContain("JBSWY3DPEHPK3PXP");
    expect(sealer.unseal(sealed, "totp:user-1")).toBe("JBSWY3DPEHPK3PXP");
    // a sealed seed copied to another user's row does not open there
    expect(sealer.unseal(sealed, "totp:user-2")).toBeUndefined();
    expect(() => statSync(file)).toThrow();
    // another deployment's secret opens nothing
    const other = openSealer({ secretKey: Buffer.alloc(32, 7).toString("base64"), keyFile: file });
    expect(other.unseal(sealed, "totp:user-1")).toBeUndefined();
  });

  it("without one: a 0600 key file made when first needed, whose seeds still open once a secret is configured", async () => {
    const file = await keyFile();
    const sealer = openSealer({ keyFile: file });
    expect(() => statSync(file)).toThrow();
    const sealed = sealer.seal("JBSWY3DPEHPK3PXP", "totp:user-1");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(openSealer({ keyFile: file }).unseal(sealed, "totp:user-1")).toBe("JBSWY3DPEHPK3PXP");
    const later = openSealer({ secretKey: TEST_SECRET_KEY, keyFile: file });
    expect(later.unseal(sealed, "totp:user-1")).toBe("JBSWY3DPEHPK3PXP");
  });
});
