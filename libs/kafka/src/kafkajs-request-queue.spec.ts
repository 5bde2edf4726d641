/**
 * kafkajs 2.2.4's RequestQueue, as patched by `patches/kafkajs+2.2.4.patch` (applied by
 * patch-package on install, docs/adr/0029). Unpatched, a queue with nothing pending re-armed a
 * timer with a negative delay after every check: a 1 ms loop for as long as each broker connection
 * lived, 15–30 ms of CPU a second in every idle service.
 */
interface Queue {
  pending: unknown[];
  throttledUntil: number;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
  canSendSocketRequestImmediately(): boolean;
  destroy(): void;
}

type QueueClass = new (options: {
  maxInFlightRequests: number | null;
  requestTimeout: number;
  enforceRequestTimeout: boolean;
  clientId: string;
  broker: string;
  logger: { debug(): void; warn(): void; error(): void; info(): void };
}) => Queue;

const RequestQueue = jest.requireActual<QueueClass>('kafkajs/src/network/requestQueue');

const quiet = { debug() {}, warn() {}, error() {}, info() {} };
const queue = () =>
  new RequestQueue({
    maxInFlightRequests: null,
    requestTimeout: 30_000,
    enforceRequestTimeout: false,
    clientId: 'spec',
    broker: 'localhost:9092',
    logger: quiet,
  });

describe('kafkajs RequestQueue (patched)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('arms no timer when nothing is pending', () => {
    const q = queue();
    q.checkPendingRequests();
    q.scheduleCheckPendingRequests();
    expect(jest.getTimerCount()).toBe(0);
    q.destroy();
  });

  it('stays quiet across a second of idleness once a check has run', () => {
    const q = queue();
    const checks = jest.spyOn(q, 'checkPendingRequests');
    q.checkPendingRequests();
    jest.advanceTimersByTime(1_000);
    expect(checks).toHaveBeenCalledTimes(1);
    q.destroy();
  });

  it('checks a request held back by throttling once the throttle ends', () => {
    const q = queue();
    const sent: unknown[] = [];
    q.throttledUntil = Date.now() + 50;
    const held = { send: () => sent.push(held) };
    q.pending.push(held);
    // The queue sends a pending request through its own sendSocketRequest.
    (q as unknown as { sendSocketRequest: (r: { send(): void }) => void }).sendSocketRequest = (
      r,
    ) => r.send();
    q.scheduleCheckPendingRequests();
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(49);
    expect(sent).toHaveLength(0);
    jest.advanceTimersByTime(1);
    expect(sent).toEqual([held]);
    expect(q.pending).toHaveLength(0);
    expect(jest.getTimerCount()).toBe(0);
    q.destroy();
  });
});
