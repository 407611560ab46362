import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // e2e tests spawn CLI processes and servers; two cores
    maxWorkers: 2,
    // expect.poll waits on real work (argon2 hashing, a browser): its 1 s default failed on a
    // loaded machine; this bounds the wait, it asserts no timing
    expect: { poll: { timeout: 15_000 } },
  },
});
