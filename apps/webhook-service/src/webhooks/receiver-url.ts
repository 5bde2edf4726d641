import { lookup } from 'node:dns/promises';
import { BlockList, isIPv4, isIPv6 } from 'node:net';

import ipaddr from 'ipaddr.js';

import { WebhookError, WebhookErrorCode } from './webhooks.errors';

/**
 * Addresses refused even though `ipaddr.js` calls them unicast (review N10), checked with node's
 * own address parser (`ipaddr.js` reads `::a.b.c.d` as `::ffff:a.b.c.d`):
 * - 168.63.129.16: Azure's WireServer (VM agent, host DNS, health probes), in a public range; the
 *   other clouds' metadata endpoints are link-local, unique-local or CGNAT, refused by range;
 * - `::/96`: IPv4-compatible addresses (`::a.b.c.d`, deprecated by RFC 4291), which a host with
 *   automatic tunnelling may route to the IPv4 address they carry; `::` and `::1` are in it too;
 * - `64:ff9b:1::/48`: local-use NAT64 (RFC 8215), a translator inside the network. The
 *   well-known prefix `64:ff9b::/96` is refused by range (`rfc6052`).
 * An IPv4 rule also matches the address mapped into IPv6 (`::ffff:168.63.129.16`).
 */
const DENIED = new BlockList();
DENIED.addAddress('168.63.129.16', 'ipv4');
DENIED.addSubnet('::', 96, 'ipv6');
DENIED.addSubnet('64:ff9b:1::', 48, 'ipv6');

/**
 * Whether an address is a public unicast one. Everything else is refused as a receiver unless
 * private receivers are allowed: loopback, RFC 1918 and unique-local, link-local (the cloud
 * metadata endpoint 169.254.169.254), carrier-grade NAT, multicast, reserved, unspecified, NAT64,
 * 6to4 and Teredo, IPv4 addresses mapped into IPv6 (judged as the IPv4 address they carry), and
 * the deny list above. Forms node would not read as an address (`127.1`) are not public either.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
  if (family === undefined || !ipaddr.isValid(address)) return false;
  try {
    if (DENIED.check(address, family)) return false;
  } catch {
    return false;
  }
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
