/**
 * The embedded mode's transport: in-process, on SQLite, a command that sends request after request
 * (an export of a million events) never needs the event loop, so callbacks that hold each answer
 * (the ends of light-my-request's fake socket) waited in its check phase until the command ended.
 * The transport lets them run after each answer; here, with a route that does no I/O at all.
 */
import { describe, expect, it } from "vitest";
import { InjectTransport } from "../../src/client/inject-transport.js";
import { useTestServer } from "../helpers/server.js";

describe("InjectTransport", () => {
  const server = useTestServer({ login: false });
  const waitingImmediates = () => process.getActiveResourcesInfo().filter((kind) => kind === "Immediate").length;

  it("leaves no callback holding an answer behind it, however many requests follow one another", async () => {
    const transport = new InjectTransport(server.app, "in-process");
    const before = waitingImmediates();
    for (let i = 0; i < 200; i++) {
      const answer = await transport.send({ method: "GET", path: "/health", headers: {} });
      expect(answer.status).toBe(200);
    }
    expect(waitingImmediates() - before).toBeLessThan(5);
  });
});
