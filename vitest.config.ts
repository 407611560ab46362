import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // e2e tests spawn CLI processes and servers; two cores
    maxWorkers: 2,
  },
});
