// autocannon with the bench's settings: any error, timeout or non-2xx answer fails the measure.
import autocannon from "autocannon";
import { CONNECTIONS } from "./config.mjs";

/** `extra`: further autocannon options (`requests` with a setupRequest, for per-request headers). */
export async function cannon(url, headers, seconds, extra = {}) {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: seconds, ...extra });
  if (result.errors || result.timeouts || result.non2xx) {
    const statuses = Object.entries(result.statusCodeStats ?? {})
      .map(([code, { count }]) => `${count} x ${code}`)
      .join(", ");
    throw new Error(
      `autocannon on ${url}: ${result.non2xx} non-2xx responses${statuses ? ` (${statuses})` : ""}, ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  return result;
}
