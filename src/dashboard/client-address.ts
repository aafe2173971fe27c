// Which client a login attempt came from, for the login throttle. Only a source the platform
// itself sets is trusted: a header any client can send would let an attacker pick a fresh
// address for every guess.
import { read } from "../settings/catalog.js";
import type { Context } from "hono";

/** Where the client's address is read. */
export type AddressSource =
  /** Cloudflare's `cf-connecting-ip` on Workers, Vercel's `x-real-ip` on Vercel, else the Node socket. */
  | { readonly kind: "auto" }
  /** A header the proxy in front sets; for `x-forwarded-for`, the entry it appended (the last). */
  | { readonly kind: "header"; readonly name: string };

/** Attempts whose address is unknown share this key (and so one counter). */
export const UNKNOWN_ADDRESS = "unknown";

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

const ipv4 = (text: string): string | undefined => {
  const m = IPV4.exec(text);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts.join(".") : undefined;
};

/** The eight 16-bit groups of an IPv6 address, or undefined. */
const ipv6Groups = (text: string): number[] | undefined => {
  if (!/^[0-9a-f:.]+$/i.test(text) || text.length > 45) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (part: string): number[] | undefined => {
    if (part === "") return [];
    const out: number[] = [];
    const pieces = part.split(":");
    for (const [i, piece] of pieces.entries()) {
      const v4 = i === pieces.length - 1 && piece.includes(".") ? ipv4(piece) : undefined;
      if (v4) {
        const [a, b, c, d] = v4.split(".").map(Number) as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
      } else if (/^[0-9a-f]{1,4}$/i.test(piece)) out.push(Number.parseInt(piece, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  return [...head, ...Array<number>(missing).fill(0), ...tail];
};

/**
 * The throttle's key for an address: an IPv4 address as written, an IPv6 address by its /64
 * (one subscriber usually holds a whole /64, so counting single IPv6 addresses would let one
 * client rotate through billions), an IPv4-mapped IPv6 address as its IPv4 address.
 * Anything else is not an address.
 */
export const addressKey = (raw: string | undefined): string | undefined => {
  if (raw === undefined) return undefined;
  const text = raw.trim().replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
  const v4 = ipv4(text);
  if (v4) return v4;
  const g = ipv6Groups(text);
  if (!g) return undefined;
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255].join(".");
  return `${g.slice(0, 4).map((x) => x.toString(16)).join(":")}::/64`;
};

interface NodeBindings {
  readonly incoming?: { readonly socket?: { readonly remoteAddress?: string } };
}

const onVercel = (env: Readonly<Record<string, string | undefined>>): boolean =>
  read(env, "VERCEL") === "1" || typeof (globalThis as { EdgeRuntime?: unknown }).EdgeRuntime === "string";

/** The raw address of the client, from the configured source, or undefined. */
export const clientAddress = (c: Context, source: AddressSource, env: Readonly<Record<string, string | undefined>>): string | undefined => {
  if (source.kind === "header") {
    const value = c.req.header(source.name);
    if (value === undefined) return undefined;
    return source.name === "x-forwarded-for" ? value.split(",").at(-1) : value;
  }
  // Set by the runtime, never by the client: a request with `cf` was delivered by Cloudflare,
  // which overwrites cf-connecting-ip.
  if ((c.req.raw as Request & { cf?: unknown }).cf !== undefined) return c.req.header("cf-connecting-ip");
  // Vercel overwrites x-real-ip (and x-forwarded-for) with the address it saw.
  if (onVercel(env)) return c.req.header("x-real-ip");
  // @hono/node-server passes the Node request as the bindings.
  return (c.env as NodeBindings | undefined)?.incoming?.socket?.remoteAddress;
};
