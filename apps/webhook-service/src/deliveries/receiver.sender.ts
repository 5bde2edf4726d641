import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

import ipaddr from 'ipaddr.js';

import { isPublicAddress } from '../webhooks/receiver-url';

/** What one POST to a receiver came to. */
export interface SendResult {
  /** The receiver's HTTP status, or null when none came. */
  statusCode: number | null;
  /** Why it did not succeed, for the delivery log; null on a 2xx. */
  error: string | null;
}

/** The port the dispatcher sends through (a test swaps it). */
export interface ReceiverSender {
  post(url: string, headers: Record<string, string>, body: string): Promise<SendResult>;
}

export class BlockedAddressError extends Error {}

/**
 * dns.lookup that refuses non-public addresses at connect time, so a receiver name re-pointed
 * at an internal address after it was validated (DNS rebinding) is not reached.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, found: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const blocked = found.find((entry) => !isPublicAddress(entry.address));
    if (blocked) {
      return callback(
        new BlockedAddressError(`${hostname} resolves to ${blocked.address}, a non-public address`),
        '',
        0,
      );
    }
    if (options.all)
      return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, found);
    return callback(null, found[0]!.address, found[0]!.family);
  });
};

const MAX_ERROR = 500;
/** More of an answer than this is not read. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs with node's HTTP client: no redirects followed (a 3xx is a failed try), nothing of the
 * answer kept but its status, the whole exchange bounded by `timeoutMs`.
 */
export class HttpReceiverSender implements ReceiverSender {
  constructor(
    private readonly options: { timeoutMs: number; allowPrivate: boolean; userAgent: string },
  ) {}

  post(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const target = new URL(url);
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (!this.options.allowPrivate && ipaddr.isValid(literal) && !isPublicAddress(literal)) {
      return Promise.resolve({ statusCode: null, error: `${literal} is a non-public address` });
    }
    const client = target.protocol === 'https:' ? https : http;
    return new Promise<SendResult>((resolve) => {
      const request = client.request(
        target,
        {
          method: 'POST',
          headers: {
            ...headers,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'user-agent': this.options.userAgent,
          },
          signal: AbortSignal.timeout(this.options.timeoutMs),
          ...(this.options.allowPrivate ? {} : { lookup: guardedLookup }),
        },
        (response) => {
          const statusCode = response.statusCode ?? null;
          const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
          const result = { statusCode, error: ok ? null : `receiver answered HTTP ${statusCode}` };
          // The answer's body is not kept: drained so the socket is freed, cut off past a limit.
          let bytes = 0;
          response.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            if (bytes > MAX_ANSWER_BYTES) {
              response.destroy();
              resolve(result);
            }
          });
          response.on('end', () => resolve(result));
          response.on('error', (error) =>
            resolve({ statusCode, error: describe(error, this.options.timeoutMs) }),
          );
        },
      );
      request.on('error', (error) =>
        resolve({ statusCode: null, error: describe(error, this.options.timeoutMs) }),
      );
      request.end(body);
    });
  }
}

function describe(error: Error & { code?: string }, timeoutMs: number): string {
  if (error.name === 'AbortError' || error.name === 'TimeoutError') {
    return `no answer within ${timeoutMs} ms`;
  }
  const text = error.code ? `${error.message} (${error.code})` : error.message;
  return text.slice(0, MAX_ERROR);
}
