import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where an endpoint may point (SSRF): `https://` only, and never at an address inside the
 * service's own network: loopback, private (RFC 1918, unique local), carrier-grade NAT,
 * link-local (the cloud metadata services live at 169.254.169.254 and fd00:ec2::254), multicast,
 * reserved, documentation and benchmarking ranges, and IPv6 forms that carry an IPv4 address,
 * which could smuggle any of the above. Checked when an endpoint is saved and again at every
 * delivery, on the addresses the connection actually uses (the lookup below is the socket's own),
 * since DNS can change between the two (rebinding).
 *
 * The ranges are ipaddr.js's tables of the IANA special-purpose registries (RFC 6890 and its
 * updates): an address is allowed only when it is in none of them (`unicast`).
 */

/** The global unicast space (2000::/3): the only IPv6 space IANA allocates to networks on the internet. */
const GLOBAL_UNICAST_V6: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('2000::'), 3];
const WELL_KNOWN_NAT64: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('64:ff9b::'), 96];
function isForbiddenIPv4(address: ipaddr.IPv4): boolean {
  return address.range() !== 'unicast';
}

function isForbiddenIPv6(address: ipaddr.IPv6): boolean {
  switch (address.range()) {
    // ::ffff:a.b.c.d: the socket connects over IPv4, to exactly that address.
    case 'ipv4Mapped':
    // ::ffff:0:a.b.c.d (RFC 6145, IPv4-translated): a stateless translator forwards to exactly that address.
    case 'rfc6145':
      return isForbiddenIPv4(lastIPv4Of(address));
    case 'rfc6052':
      // 64:ff9b::a.b.c.d (RFC 6052, the well-known NAT64 prefix): on an IPv6-only network DNS64
      // answers this form for every IPv4-only host, so refusing the prefix would stop deliveries
      // there; the translator connects to the embedded address, which is what is judged.
      // 64:ff9b:1::/48 (RFC 8215, local-use NAT64): refused outright. The operator chooses the
      // prefix length, and with it where the IPv4 address sits, so the destination cannot be read
      // from the address; and it is by definition a translator of the operator's own network.
      return address.match(WELL_KNOWN_NAT64) ? isForbiddenIPv4(lastIPv4Of(address)) : true;
    // 2002::/16 (6to4, deprecated by RFC 7526): relayed in IPv4 to the address in bits 16-47,
    // through whichever 6to4 relay or interface the network has (2002:a00:1:: reaches 10.0.0.1).
    // Refused outright: no webhook receiver is reachable only this way, and the relay decides.
    case '6to4':
    // 2001::/32 (Teredo, RFC 4380): tunnelled over UDP/IPv4 to the client address in the last 32
    // bits (inverted), through Teredo relays. Refused outright for the same reasons: a client
    // tunnel, never a server's address, and the relay decides where it leads.
    case 'teredo':
      return true;
    case 'unicast':
      // Outside 2000::/3 nothing is on the internet: what ipaddr.js leaves `unicast` there is
      // unassigned or obsolete, such as ::a.b.c.d (IPv4-compatible, deprecated by RFC 4291, which
      // some stacks still send to a.b.c.d over IPv4).
      return !address.match(GLOBAL_UNICAST_V6);
    default:
      return true;
  }
}

/** The IPv4 address in the last 32 bits of an IPv6 address. */
function lastIPv4Of(address: ipaddr.IPv6): ipaddr.IPv4 {
  const [, , , , , , high, low] = address.parts;
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** Whether a connection to this address (an IP literal in its standard form, as a URL or DNS gives it) is refused. */
export function isForbiddenAddress(address: string): boolean {
  // node:net's isIP is strict (no "127.1" or "0x7f.0.0.1"); ipaddr.js would read those too.
  const family = isIP(address);
  if (family === 0) return true;
  const parsed = ipaddr.parse(address);
  return parsed.kind() === 'ipv4' ? isForbiddenIPv4(parsed as ipaddr.IPv4) : isForbiddenIPv6(parsed as ipaddr.IPv6);
}

export class UrlRefusedError extends Error {}

/** Every address a host name resolves to (node:dns lookup with `all`, the system's resolver); tests give their own DNS answers. */
export type ResolveAll = (
  hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolver: ResolveAll = (hostname, options, callback) =>
  dnsLookup(hostname, { ...options, all: true }, callback);

export class UrlGuard {
  constructor(
    readonly allowPrivate: boolean,
    private readonly resolveAll: ResolveAll = systemResolver,
  ) {}

  /** Why this URL may not be an endpoint (a message for `url: …`), or undefined. Resolves the host. */
  async problem(url: string): Promise<string | undefined> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'Invalid url';
    }
    if (parsed.username || parsed.password) return 'must not contain credentials';
    if (this.allowPrivate)
      return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? undefined : 'must be an https:// URL';
    if (parsed.protocol !== 'https:') return 'must be an https:// URL';
    const host = parsed.hostname.replace(/^\[|\]$/g, '');
    try {
      const addresses = isIP(host) ? [host] : await this.addressesOf(host);
      if (addresses.length === 0) return 'host does not resolve';
      if (addresses.some(isForbiddenAddress))
        return 'must not point at a loopback, private, link-local or metadata address';
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
    this.resolveAll(hostname, options, (err, list) => {
      if (err) return callback(err, '', 0);
      if (!this.allowPrivate && (list.length === 0 || list.some((a) => isForbiddenAddress(a.address)))) {
        return callback(new UrlRefusedError(`${hostname} resolves to an address that is not allowed`), '', 0);
      }
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };

  private addressesOf(host: string): Promise<string[]> {
    return new Promise((resolve, reject) =>
      this.resolveAll(host, {}, (err, addresses) => (err ? reject(err) : resolve(addresses.map((a) => a.address)))),
    );
  }

  /** Refuses a URL whose host is an IP literal in a forbidden range (no lookup happens for those). */
  literalProblem(url: URL): string | undefined {
    if (this.allowPrivate) return undefined;
    if (url.protocol !== 'https:') return 'must be an https:// URL';
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return isIP(host) && isForbiddenAddress(host) ? 'address not allowed' : undefined;
  }
}
