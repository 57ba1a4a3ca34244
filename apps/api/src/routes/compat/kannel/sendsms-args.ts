import type { FastifyRequest } from 'fastify';
import { isE164 } from '@smsgw/core';
import { NUMBERS_DENIED, KannelRefusal, rejected } from './answers.ts';

/**
 * Reading a `sendsms` request as Kannel's smsbox does: a GET carries everything in the query; a
 * POST carries the text as its body and the rest in `X-Kannel-*` headers (smsgw also takes the
 * query, a header winning). Values are kept as bytes until `charset` says how to read the text.
 */

/** Kannel's deprecated spellings, still read. */
const ALIASES: Record<string, string[]> = {
  username: ['username', 'user'],
  password: ['password', 'pass'],
  'dlr-url': ['dlr-url', 'dlrurl'],
  'dlr-mask': ['dlr-mask', 'dlrmask'],
  mclass: ['mclass', 'flash'],
};

/** `%XX` to bytes, `+` to a space, first occurrence of a name wins (as Kannel's `http_cgi_variable`). */
export function parseQuery(rawUrl: string): Map<string, Buffer> {
  const args = new Map<string, Buffer>();
  const query = rawUrl.includes('?') ? rawUrl.slice(rawUrl.indexOf('?') + 1) : '';
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const at = pair.indexOf('=');
    const name = percentDecode(at < 0 ? pair : pair.slice(0, at)).toString('utf8');
    if (!args.has(name)) args.set(name, percentDecode(at < 0 ? '' : pair.slice(at + 1)));
  }
  return args;
}

function percentDecode(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '+') bytes.push(0x20);
    else if (c === '%' && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(c, 'utf8'));
  }
  return Buffer.from(bytes);
}

export interface SendsmsArgs {
  /** The raw bytes of a parameter (by its name or a deprecated alias), or undefined. */
  bytes(name: string): Buffer | undefined;
  /** A parameter read as UTF-8 text (with the blanks around it stripped, as Kannel does). */
  text(name: string): string | undefined;
  /** A number parameter read as Kannel's `sscanf("%d")` reads it: leading digits, else unset. */
  number(name: string): number | undefined;
}

export function sendsmsArgs(request: FastifyRequest): SendsmsArgs {
  const query = parseQuery(request.raw.url ?? '');
  const isPost = request.method === 'POST';
  const bytes = (name: string): Buffer | undefined => {
    for (const alias of ALIASES[name] ?? [name]) {
      const header = isPost ? request.headers[`x-kannel-${alias}`] : undefined;
      if (typeof header === 'string') return Buffer.from(header.trim(), 'latin1');
      const value = query.get(alias);
      if (value !== undefined) return value;
    }
    return undefined;
  };
  const text = (name: string) => bytes(name)?.toString('utf8').trim();
  const number = (name: string) => {
    const match = /^\s*([+-]?\d+)/.exec(text(name) ?? '');
    return match ? Number(match[1]) : undefined;
  };
  return { bytes, text, number };
}

/**
 * The text in `charset` (Kannel's default: UTF-8, or UTF-16BE with `coding=2`). Bytes that are not
 * valid in it, or a charset the runtime does not know, are Kannel's "Charset or body misformed".
 */
export function decodeText(bytes: Buffer, charset: string | undefined, coding: number): string {
  const label = charset || (coding === 2 ? 'utf-16be' : 'utf-8');
  try {
    return new TextDecoder(label, { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw rejected('Charset or body misformed, rejected');
  }
}

/** The characters Kannel accepts in `to` by default (its `sendsms-chars`). */
const NUMBER_CHARS = /^[0-9+-]+$/;

/**
 * The recipients of `to`: numbers separated by blanks, international (`+49…`, `0049…`, or `49…`
 * as Kannel sends it to an SMSC with an international type of number). A national number (one
 * leading 0) or any other character is refused, the whole request with it (docs/decisions.md,
 * "Kannel sendsms"). Returns each E.164 number with the spelling the client gave (for `%p`).
 */
export function parseRecipients(to: string): { numbers: string[]; given: Map<string, string> } {
  const given = new Map<string, string>();
  for (const word of to.split(/\s+/).filter(Boolean)) {
    if (!NUMBER_CHARS.test(word)) throw new KannelRefusal(NUMBERS_DENIED);
    const digits = word.replace(/-/g, '');
    const e164 = digits.startsWith('+') ? digits : digits.startsWith('00') ? `+${digits.slice(2)}` : /^[1-9]/.test(digits) ? `+${digits}` : '';
    if (!isE164(e164)) throw new KannelRefusal(NUMBERS_DENIED);
    if (!given.has(e164)) given.set(e164, word);
  }
  return { numbers: [...given.keys()], given };
}
