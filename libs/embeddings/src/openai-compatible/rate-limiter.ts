/** A client-side budget, per key: requests and/or tokens a minute. */
export interface RateLimit {
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  /**
   * How many seconds' worth of budget may be spent at once after a quiet spell (the bucket size).
   * Default 1: providers enforce per-minute limits over shorter windows (OpenAI documents that
   * 60 RPM may be enforced as 1 request a second), so a full minute's burst would be refused.
   */
  burstSeconds?: number;
}

type Clock = () => number;
const monotonic: Clock = () => performance.now();

/**
 * A token bucket that hands out reservations: `reserve(n)` takes `n` at once, going into debt when
 * the bucket holds less, and says how long the caller must wait for the debt to be refilled. Taking
 * at once makes concurrent callers queue in call order with no lock, and a request bigger than the
 * bucket still goes through, after waiting for its share.
 */
export class TokenBucket {
  private level: number;
  private updated: number;

  constructor(
    readonly capacity: number,
    private readonly perMs: number,
    private readonly now: Clock = monotonic,
  ) {
    if (!(capacity > 0) || !(perMs > 0))
      throw new Error('a token bucket needs a positive size and rate');
    this.level = capacity;
    this.updated = now();
  }

  /** Takes `amount`; returns the milliseconds to wait before using it (0: use it now). */
  reserve(amount: number): number {
    this.refill();
    this.level -= amount;
    return this.level >= 0 ? 0 : -this.level / this.perMs;
  }

  /** True when the bucket is full again: forgetting it changes nothing. */
  get idle(): boolean {
    this.refill();
    return this.level >= this.capacity;
  }

  private refill(): void {
    const now = this.now();
    this.level = Math.min(this.capacity, this.level + (now - this.updated) * this.perMs);
    this.updated = now;
  }
}

interface Buckets {
  requests?: TokenBucket;
  tokens?: TokenBucket;
}

/** Buckets per key (for embeddings: per tenant and model), created on first use. */
export class KeyedRateLimiter {
  private readonly buckets = new Map<string, Buckets>();

  constructor(
    private readonly limit: RateLimit,
    private readonly now: Clock = monotonic,
    /** Past this many keys, idle buckets (full again) are forgotten. */
    private readonly maxKeys = 10_000,
  ) {}

  get enabled(): boolean {
    return Boolean(this.limit.requestsPerMinute || this.limit.tokensPerMinute);
  }

  /** Reserves one request of `tokens` tokens for `key`; returns the milliseconds to wait first. */
  reserve(key: string, tokens: number): number {
    if (!this.enabled) return 0;
    const buckets = this.bucketsFor(key);
    return Math.max(buckets.requests?.reserve(1) ?? 0, buckets.tokens?.reserve(tokens) ?? 0);
  }

  /** Charges `tokens` more (or refunds, when negative) once the real count is known. */
  adjust(key: string, tokens: number): void {
    this.buckets.get(key)?.tokens?.reserve(tokens);
  }

  get size(): number {
    return this.buckets.size;
  }

  private bucketsFor(key: string): Buckets {
    let buckets = this.buckets.get(key);
    if (!buckets) {
      if (this.buckets.size >= this.maxKeys) this.forgetIdle();
      buckets = {
        requests: this.bucket(this.limit.requestsPerMinute),
        tokens: this.bucket(this.limit.tokensPerMinute),
      };
      this.buckets.set(key, buckets);
    }
    return buckets;
  }

  private bucket(perMinute: number | undefined): TokenBucket | undefined {
    if (!perMinute) return undefined;
    const burst = (perMinute * (this.limit.burstSeconds ?? 1)) / 60;
    return new TokenBucket(Math.max(1, burst), perMinute / 60_000, this.now);
  }

  private forgetIdle(): void {
    for (const [key, buckets] of this.buckets) {
      if ((buckets.requests?.idle ?? true) && (buckets.tokens?.idle ?? true)) {
        this.buckets.delete(key);
      }
    }
  }
}

/** A rough token count for budgeting before the API says: about 4 characters a token. */
export const estimateTokens = (texts: string[]): number =>
  texts.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
