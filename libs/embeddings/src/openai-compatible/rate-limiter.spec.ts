import { estimateTokens, KeyedRateLimiter, TokenBucket } from './rate-limiter';

/** A clock the test moves by hand. */
const manualClock = () => {
  let now = 0;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
};

describe('TokenBucket', () => {
  it('hands out its capacity at once, then one token per refill interval', () => {
    const clock = manualClock();
    const bucket = new TokenBucket(2, 1 / 100, clock.now); // 2 tokens, one each 100 ms
    expect(bucket.reserve(1)).toBe(0);
    expect(bucket.reserve(1)).toBe(0);
    expect(bucket.reserve(1)).toBe(100);
    // Reservations queue: the next one waits behind the one already promised.
    expect(bucket.reserve(1)).toBe(200);
    clock.advance(200);
    expect(bucket.reserve(1)).toBe(100);
  });

  it('refills up to its capacity only', () => {
    const clock = manualClock();
    const bucket = new TokenBucket(3, 1 / 100, clock.now);
    bucket.reserve(3);
    expect(bucket.idle).toBe(false);
    clock.advance(10_000);
    expect(bucket.idle).toBe(true);
    expect(bucket.reserve(3)).toBe(0);
    expect(bucket.reserve(1)).toBe(100);
  });

  it('lets a reservation bigger than the bucket through after its share of time', () => {
    const clock = manualClock();
    const bucket = new TokenBucket(10, 1 / 10, clock.now);
    expect(bucket.reserve(30)).toBe(200); // 10 in the bucket, 20 more at one each 10 ms
  });

  it('refuses a bucket that could never fill', () => {
    expect(() => new TokenBucket(0, 1)).toThrow();
    expect(() => new TokenBucket(1, 0)).toThrow();
  });
});

describe('KeyedRateLimiter', () => {
  it('keeps one budget per key', () => {
    const clock = manualClock();
    const limiter = new KeyedRateLimiter({ requestsPerMinute: 60 }, clock.now); // 1/s, burst 1
    expect(limiter.reserve('a', 0)).toBe(0);
    expect(limiter.reserve('a', 0)).toBe(1_000);
    expect(limiter.reserve('b', 0)).toBe(0);
    clock.advance(2_000);
    expect(limiter.reserve('a', 0)).toBe(0);
  });

  it('waits for the scarcer of the request and token budgets', () => {
    const clock = manualClock();
    // 600 requests a minute (10 a second) but 6000 tokens a minute (100 a second).
    const limiter = new KeyedRateLimiter(
      { requestsPerMinute: 600, tokensPerMinute: 6_000 },
      clock.now,
    );
    expect(limiter.reserve('k', 100)).toBe(0);
    expect(limiter.reserve('k', 50)).toBe(500); // tokens: 50 more at 0.1 a millisecond
  });

  it('charges or refunds tokens once the API has counted them', () => {
    const clock = manualClock();
    const limiter = new KeyedRateLimiter({ tokensPerMinute: 6_000 }, clock.now);
    limiter.reserve('k', 100);
    limiter.adjust('k', 50); // the estimate was 50 short
    expect(limiter.reserve('k', 0)).toBe(500);
    limiter.adjust('k', -100);
    expect(limiter.reserve('k', 50)).toBe(0);
  });

  it('sizes the burst in seconds of budget, at least one request', () => {
    const clock = manualClock();
    const limiter = new KeyedRateLimiter({ requestsPerMinute: 600, burstSeconds: 2 }, clock.now);
    for (let i = 0; i < 20; i++) expect(limiter.reserve('k', 0)).toBe(0);
    expect(limiter.reserve('k', 0)).toBe(100);
    const slow = new KeyedRateLimiter({ requestsPerMinute: 3 }, clock.now);
    expect(slow.reserve('k', 0)).toBe(0);
    expect(slow.reserve('k', 0)).toBe(20_000);
  });

  it('never waits without a budget', () => {
    const limiter = new KeyedRateLimiter({});
    expect(limiter.enabled).toBe(false);
    for (let i = 0; i < 100; i++) expect(limiter.reserve('k', 1_000_000)).toBe(0);
    expect(limiter.size).toBe(0);
  });

  it('forgets idle keys once it holds many', () => {
    const clock = manualClock();
    const limiter = new KeyedRateLimiter({ requestsPerMinute: 60 }, clock.now, 3);
    for (const key of ['a', 'b', 'c']) limiter.reserve(key, 0);
    clock.advance(1_000); // all three are full again
    limiter.reserve('c', 0); // c is busy
    limiter.reserve('d', 0);
    expect(limiter.size).toBe(2); // a and b forgotten, c and d kept
    expect(limiter.reserve('c', 0)).toBe(1_000);
  });
});

describe('estimateTokens', () => {
  it('counts about four characters a token, at least one a non-empty text', () => {
    expect(estimateTokens(['abcd', 'abcde', ''])).toBe(1 + 2 + 0);
  });
});
