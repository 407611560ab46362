/** RFC 3339 in UTC, without a fractional part when it is zero, so that sorting text sorts time. */
export function formatTimestamp(date: Date): string {
  const iso = date.toISOString();
  return iso.endsWith(".000Z") ? `${iso.slice(0, -5)}Z` : iso;
}
