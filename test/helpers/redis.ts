/** The shared Redis of the tests; each test keeps its keys under a prefix of its own. */
export const REDIS_URL = "redis://127.0.0.1:6379";

export const freshPrefix = () => `bizctl-test:${process.pid}:${crypto.randomUUID()}:`;

/** Removes what a test left under its prefix in the shared Redis. */
export async function deleteKeys(prefix: string): Promise<void> {
  const { Redis } = (await import("ioredis")).default;
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}
