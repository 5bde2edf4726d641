import { isIPv4, isIPv6 } from 'node:net';

import { type Detector, matchesOf } from '../pii.model';

// IPv4 dotted quads and IPv6 addresses, checked by node:net. A quad inside a longer dotted run
// (an OID, `1.2.3.4.5`) or after `v` or "version" is a version, not an address.
const IPV4 = /(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)/g;
const VERSION_BEFORE = /\b(?:v|ver|version|release|build)\.?:?\s?$/i;
const IPV6 =
  /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{1,4})?(?![\w:]|\.\d)/g;

export const detectIps: Detector = (text) => [
  ...matchesOf(
    text,
    IPV4,
    'ip',
    (m) => isIPv4(m[0]) && !VERSION_BEFORE.test(text.slice(Math.max(0, m.index - 12), m.index)),
  ),
  // At least two groups with digits: `::` and `a::` alone are more often code than an address.
  ...matchesOf(
    text,
    IPV6,
    'ip',
    ([value]) => isIPv6(value) && (value.match(/[0-9A-Fa-f]+/g) ?? []).length >= 2,
  ),
];
