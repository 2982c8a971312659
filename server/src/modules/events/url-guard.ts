import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where an endpoint may point (SSRF): `https://` only, and never at an address inside the
 * service's own network: loopback, private (RFC 1918, unique local), carrier-grade NAT,
 * link-local (the cloud metadata services live at 169.254.169.254 and fd00:ec2::254), multicast,
 * reserved and documentation ranges, and IPv6 forms that embed an IPv4 address (mapped,
 * compatible, NAT64), which could smuggle any of the above. Checked when an endpoint is saved and
 * again at every delivery, on the addresses the connection actually uses (the lookup below is
 * the socket's own), since DNS can change between the two (rebinding).
 */
// Two lists: Node's BlockList also matches an IPv4 address against IPv6 rules in their mapped form,
// so one list with ::ffff:0:0/96 would refuse every IPv4 address.
const blockedV4 = new BlockList();
const blockedV6 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blockedV4.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback (::1) and IPv4-compatible
  ['::ffff:0:0', 96], // IPv4-mapped
  ['64:ff9b::', 96], // NAT64
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (fd00:ec2::254 included)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blockedV6.addSubnet(network, prefix, 'ipv6');
}

export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return family === 4 ? blockedV4.check(address, 'ipv4') : blockedV6.check(address, 'ipv6');
}

export class UrlRefusedError extends Error {}

export class UrlGuard {
  constructor(readonly allowPrivate: boolean) {}

  /** Why this URL may not be an endpoint (a message for `url: …`), or undefined. Resolves the host. */
  async problem(url: string): Promise<string | undefined> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'Invalid url';
    }
    if (parsed.username || parsed.password) return 'must not contain credentials';
    if (this.allowPrivate) return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? undefined : 'must be an https:// URL';
    if (parsed.protocol !== 'https:') return 'must be an https:// URL';
    const host = parsed.hostname.replace(/^\[|\]$/g, '');
    try {
      const addresses = isIP(host) ? [host] : (await resolveAll(host));
      if (addresses.length === 0) return 'host does not resolve';
      if (addresses.some(isForbiddenAddress)) return 'must not point at a loopback, private, link-local or metadata address';
    } catch {
      return 'host does not resolve';
    }
    return undefined;
  }

  /**
   * The `lookup` of a delivery's socket: the addresses the connection will use, refused when any is
   * forbidden. An IP literal never reaches a lookup: deliveries check it before connecting.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as unknown as { address: string; family: number }[];
      if (!this.allowPrivate && (list.length === 0 || list.some((a) => isForbiddenAddress(a.address)))) {
        return callback(new UrlRefusedError(`${hostname} resolves to an address that is not allowed`), '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };

  /** Refuses a URL whose host is an IP literal in a forbidden range (no lookup happens for those). */
  literalProblem(url: URL): string | undefined {
    if (this.allowPrivate) return undefined;
    if (url.protocol !== 'https:') return 'must be an https:// URL';
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return isIP(host) && isForbiddenAddress(host) ? 'address not allowed' : undefined;
  }
}

function resolveAll(host: string): Promise<string[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses.map((a) => a.address)))),
  );
}
