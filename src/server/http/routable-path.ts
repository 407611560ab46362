/**
 * The path of a request URL as the router can look it up: each run of escapes that does not
 * decode (a stray `%`, bytes that are not UTF-8) becomes one `_`. Such a run stops the router
 * before it looks the path up at all; as a stand-in it can only match a parameter, where any
 * character would.
 */
export function routablePath(url: string): string {
  const path = url.split("?")[0] ?? "";
  return path.replace(/(?:%[0-9a-f]{2})+|%/gi, (run) => {
    try {
      decodeURIComponent(run);
      return run;
    } catch {
      return "_";
    }
  });
}
