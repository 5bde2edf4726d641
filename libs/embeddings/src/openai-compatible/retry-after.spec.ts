import { parseDuration, retryAfterMs } from './retry-after';

const headers = (values: Record<string, string>) => new Headers(values);

describe('retryAfterMs', () => {
  const now = Date.parse('2026-01-05T10:00:00Z');

  it('reads Retry-After in seconds', () => {
    expect(retryAfterMs(headers({ 'retry-after': '7' }), 429, now)).toBe(7_000);
    expect(retryAfterMs(headers({ 'retry-after': '0.5' }), 503, now)).toBe(500);
  });

  it('reads Retry-After as an HTTP-date, never negative', () => {
    const later = headers({ 'retry-after': 'Mon, 05 Jan 2026 10:00:30 GMT' });
    expect(retryAfterMs(later, 503, now)).toBe(30_000);
    const past = headers({ 'retry-after': 'Mon, 05 Jan 2026 09:59:00 GMT' });
    expect(retryAfterMs(past, 503, now)).toBe(0);
  });

  it('prefers retry-after-ms', () => {
    const both = headers({ 'retry-after-ms': '250', 'retry-after': '1' });
    expect(retryAfterMs(both, 429, now)).toBe(250);
  });

  it("uses OpenAI's reset of whichever budget is spent, on a 429 only", () => {
    const openai = headers({
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '1s',
      'x-ratelimit-remaining-tokens': '0',
      'x-ratelimit-reset-tokens': '6m0s',
    });
    expect(retryAfterMs(openai, 429, now)).toBe(360_000);
    expect(retryAfterMs(openai, 503, now)).toBeUndefined();
    const requestsOnly = headers({
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '120ms',
      'x-ratelimit-remaining-tokens': '9000',
      'x-ratelimit-reset-tokens': '6m0s',
    });
    expect(retryAfterMs(requestsOnly, 429, now)).toBe(120);
  });

  it('is undefined when nothing says, or says nonsense', () => {
    expect(retryAfterMs(headers({}), 429, now)).toBeUndefined();
    expect(retryAfterMs(headers({ 'retry-after': 'soon' }), 429, now)).toBeUndefined();
    expect(retryAfterMs(headers({ 'retry-after': '-3' }), 429, now)).toBeUndefined();
  });
});

describe('parseDuration', () => {
  it.each([
    ['20ms', 20],
    ['1s', 1_000],
    ['1.5s', 1_500],
    ['6m0s', 360_000],
    ['1h2m3s', 3_723_000],
    ['2m', 120_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', 'abc', '5', 's', '1d'])('%j is not a duration', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});
