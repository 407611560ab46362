import { describe, expect, it } from "vitest";
import { resourceId } from "../../src/server/services/random-token.js";

describe("a resource's id", () => {
  it("is a UUID of version 7 that begins with the millisecond it was made", () => {
    const time = new Date("2026-11-28T12:34:56.789Z");
    const id = resourceId(time);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(id.replace(/-/g, "").slice(0, 12), 16)).toBe(time.getTime());
  });

  it("sorts after the ids made before it, and differs from those made in the same millisecond", () => {
    const earlier = resourceId(new Date("2026-11-28T12:00:00.000Z"));
    const later = resourceId(new Date("2026-11-28T12:00:00.001Z"));
    expect(earlier < later).toBe(true);
    const time = new Date("2026-11-28T12:00:00.002Z");
    const same = Array.from({ length: 1000 }, () => resourceId(time));
    expect(new Set(same).size).toBe(1000);
  });
});
