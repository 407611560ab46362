/**
 * Issue 32 part 3: `oauth flow` through an instance whose configured public URL is another
 * address (a second instance, a proxy's inside) fails with `oauth_signature_invalid`; the
 * message names the public URL the signature must be made over.
 */
import { describe, expect, it } from "vitest";
import { errorOf, json, show, useServer } from "../helpers/cli.js";

const PUBLIC_URL = "https://bizctl.example.test";

describe("oauth flow through an address that is not the public URL", () => {
  const s = useServer({ serverArgs: ["--public-url", PUBLIC_URL] });

  it("says that the signature was made over the address reached, and names the public URL", async () => {
    const created = await s.run(["oauth", "consumers", "create", "--name", "Printer"]);
    expect(created.exitCode, show(created)).toBe(0);
    const consumer = json(created);
    const flow = await s.run(["oauth", "flow", "--consumer-key", consumer.consumerKey, "--consumer-secret-stdin"], {
      input: `${consumer.consumerSecret}\n`,
    });
    expect(flow.exitCode, show(flow)).toBe(4);
    const error = errorOf(flow);
    expect(error.code).toBe("oauth_signature_invalid");
    expect(error.message).toContain(`made over ${s.server.url}/`);
    expect(error.message).toContain(`its public URL: ${PUBLIC_URL}/`);
  });
});
