import { lookup } from 'node:dns/promises';

import ipaddr from 'ipaddr.js';

import { WebhookError, WebhookErrorCode } from './webhooks.errors';

/**
 * Whether an address is a public unicast one. Everything else is refused as a receiver unless
 * private receivers are allowed: loopback, RFC 1918 and unique-local, link-local (the cloud
 * metadata endpoint 169.254.169.254), carrier-grade NAT, multicast, reserved, unspecified, and
 * IPv4 addresses mapped into IPv6, judged as the IPv4 address they carry.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

const invalid = (message: string): WebhookError =>
  new WebhookError(WebhookErrorCode.InvalidUrl, message);

/** The host part of a URL as an address, when it is a literal (IPv6 without its brackets). */
function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(bare) ? bare : undefined;
}

/**
 * Checks a receiver URL before it is stored: http or https, no credentials, no fragment, and,
 * unless `allowPrivate`, a host that is or resolves only to public addresses. The sender checks
 * the address again when it connects (`guardedLookup`), so a name that later resolves elsewhere
 * (DNS rebinding) is still refused.
 */
export async function validateReceiverUrl(
  raw: string,
  options: { allowPrivate: boolean; resolve?: (host: string) => Promise<string[]> },
): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('url: not a valid absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(`url: must be http or https, not ${url.protocol.replace(':', '')}`);
  }
  if (url.username || url.password) throw invalid('url: must not carry credentials');
  if (url.hash) throw invalid('url: must not have a fragment');
  if (options.allowPrivate) return url;
  const literal = literalAddress(url.hostname);
  const addresses = literal
    ? [literal]
    : await (options.resolve ?? resolveAll)(url.hostname).catch(() => {
        throw invalid(`url: ${url.hostname} does not resolve`);
      });
  const blocked = addresses.find((address) => !isPublicAddress(address));
  if (blocked !== undefined) {
    throw invalid(
      `url: ${url.hostname} is ${blocked === url.hostname ? 'a' : `at ${blocked}, a`} non-public address; receivers must be public (WEBHOOK_ALLOW_PRIVATE_URLS)`,
    );
  }
  return url;
}

async function resolveAll(host: string): Promise<string[]> {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
}
