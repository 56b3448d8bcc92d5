// Which addresses a delivery may reach (docs/delivery.md): public unicast only. Pure, so the same
// rules run on Node (every resolved address) and on workerd (literal IPs in the URL).

const BLOCKED_NAMES = new Set(['localhost', 'metadata.google.internal', 'metadata', 'instance-data']);

/** Why a host name is refused before any lookup, or null. */
export function blockedHostName(host: string): string | null {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (BLOCKED_NAMES.has(name) || name.endsWith('.localhost'))
    return name === 'localhost' || name.endsWith('.localhost') ? 'loopback' : 'cloud metadata';
  return null;
}

/** Why an IP address is refused (loopback, private, …), or null for a public unicast address. Non-IPs: null. */
export function blockedAddress(address: string): string | null {
  const v4 = parseIpv4(address);
  if (v4 !== null) return blockedIpv4(v4);
  const v6 = parseIpv6(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  return v6 === null ? null : blockedIpv6(v6);
}

const IPV4_RANGES: [string, number, string][] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private (RFC 1918)'],
  ['100.64.0.0', 10, 'CGNAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.169.254', 32, 'cloud metadata'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private (RFC 1918)'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.168.0.0', 16, 'private (RFC 1918)'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const IPV4_TABLE = IPV4_RANGES.map(([base, bits, why]) => ({
  base: parseIpv4(base)!,
  mask: bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0,
  why,
}));

function blockedIpv4(ip: number): string | null {
  for (const r of IPV4_TABLE) if ((ip & r.mask) >>> 0 === r.base) return r.why;
  return null;
}

function blockedIpv6(g: number[]): string | null {
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  const embedded = () => ((g[6]! << 16) | g[7]!) >>> 0;
  if (zeroUpTo(8)) return 'unspecified';
  if (zeroUpTo(7) && g[7] === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach the IPv4 inside.
  if ((zeroUpTo(5) && (g[5] === 0xffff || g[5] === 0)) || (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0))) {
    const why = blockedIpv4(embedded());
    return why && `${why}, as IPv4 inside IPv6`;
  }
  // 6to4 (2002:a.b.c.d::/48) routes to the IPv4 in its second and third groups.
  if (g[0] === 0x2002) {
    const why = blockedIpv4(((g[1]! << 16) | g[2]!) >>> 0);
    if (why) return `${why}, as IPv4 inside 6to4`;
  }
  if (g[0] === 0xfd00 && g[1] === 0x0ec2 && g.slice(2, 7).every((x) => x === 0) && g[7] === 0x254) return 'cloud metadata';
  if ((g[0]! & 0xfe00) === 0xfc00) return 'private (fc00::/7)';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0]! & 0xffc0) === 0xfec0) return 'site-local';
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast';
  return null;
}

/** Dotted-quad IPv4 as an unsigned 32-bit number, or null. (URL parsing already turned 0x7f.1 and the like into dotted quads.) */
export function parseIpv4(s: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return null;
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

/** IPv6 text (with :: and an optional trailing dotted quad) as eight 16-bit groups, or null. */
export function parseIpv6(s: string): number[] | null {
  if (!s.includes(':')) return null;
  let text = s;
  const tail: number[] = [];
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = parseIpv4(dotted[2]!);
    if (v4 === null) return null;
    tail.push(v4 >>> 16, v4 & 0xffff);
    text = dotted[1]!.endsWith('::') ? dotted[1]! : dotted[1]!.slice(0, -1);
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  if ([...head, ...rest].some((x) => !/^[0-9a-f]{1,4}$/i.test(x))) return null;
  const known = head.length + rest.length + tail.length;
  if (halves.length === 1 ? known !== 8 : known > 7) return null;
  const zeros = new Array<number>(8 - known).fill(0);
  return [...head.map((x) => parseInt(x, 16)), ...zeros, ...rest.map((x) => parseInt(x, 16)), ...tail];
}
