/**
 * How long an API asks the client to wait before trying again, in milliseconds, read from a
 * response's headers; undefined when it does not say. In order of precedence:
 * - `retry-after-ms` (OpenAI, Azure OpenAI): milliseconds;
 * - `Retry-After` (RFC 9110): delay-seconds or an HTTP-date;
 * - on a 429 only, OpenAI's `x-ratelimit-reset-requests` / `x-ratelimit-reset-tokens` (durations
 *   such as `1s`, `6m0s`, `20ms`) for whichever budget `x-ratelimit-remaining-*` says is spent.
 */
export function retryAfterMs(
  headers: Headers,
  status: number,
  now: number = Date.now(),
): number | undefined {
  const ms = numberOf(headers.get('retry-after-ms'));
  if (ms !== undefined) return ms;
  const retryAfter = headers.get('retry-after')?.trim();
  if (retryAfter) {
    const seconds = numberOf(retryAfter);
    if (seconds !== undefined) return seconds * 1000;
    // An HTTP-date (`Wed, 21 Oct 2015 07:28:00 GMT`); Date.parse alone takes `-3` for a year.
    const date = /[a-z]{3}/i.test(retryAfter) ? Date.parse(retryAfter) : Number.NaN;
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  if (status !== 429) return undefined;
  const resets = (['requests', 'tokens'] as const)
    .filter((budget) => headers.get(`x-ratelimit-remaining-${budget}`)?.trim() === '0')
    .map((budget) => parseDuration(headers.get(`x-ratelimit-reset-${budget}`)))
    .filter((reset): reset is number => reset !== undefined);
  return resets.length > 0 ? Math.max(...resets) : undefined;
}

/** A Go-style duration (`1h2m3.5s`, `6m0s`, `250ms`) in milliseconds. */
export function parseDuration(value: string | null | undefined): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  const match = /^(?:([\d.]+)h)?(?:([\d.]+)m(?!s))?(?:([\d.]+)s)?(?:([\d.]+)ms)?$/.exec(text);
  if (!match || match.slice(1).every((part) => part === undefined)) return undefined;
  const [hours, minutes, seconds, millis] = match.slice(1).map((part) => Number(part ?? 0));
  const total = (hours! * 3600 + minutes! * 60 + seconds!) * 1000 + millis!;
  return Number.isFinite(total) ? total : undefined;
}

function numberOf(value: string | null | undefined): number | undefined {
  const text = value?.trim();
  if (!text || !/^\d+(?:\.\d+)?$/.test(text)) return undefined;
  return Number(text);
}
