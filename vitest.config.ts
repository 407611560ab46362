import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two cores, but a worker often waits on a process it spawned, a socket or a browser: with
    // two workers a tenth of the CPU stayed idle; three keep both cores busy (docs/testing.md)
    maxWorkers: 3,
    // expect.poll waits on real work (argon2 hashing, a browser): its 1 s default failed on a
    // loaded machine; this bounds the wait, it asserts no timing
    expect: { poll: { timeout: 15_000 } },
  },
});
