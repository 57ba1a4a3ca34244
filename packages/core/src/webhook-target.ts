import { lookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { isForbiddenAddress } from './network-guard.ts';

/**
 * Where a webhook may go (decisions.md, "Webhooks"): http(s) URLs whose host resolves only to
 * public addresses, checked when the endpoint is registered and again, by the connection's own
 * lookup, each time smsgw connects (a DNS answer that changed since is caught).
 */

/** Resolves a host name to its addresses; replaced by a stub in tests. */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    lookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses.map((a) => a.address))));
  });

export class WebhookTargetError extends Error {
  override name = 'WebhookTargetError';
}

export interface TargetPolicy {
  /** WEBHOOK_ALLOW_PRIVATE: internal addresses are allowed. */
  allowPrivate: boolean;
  resolve?: Resolver;
}

/** The URL's host without the brackets of an IPv6 literal. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** Checks the form of a webhook URL: absolute http(s), no credentials, at most 2,000 characters. */
export function parseWebhookUrl(text: string): URL {
  if (text.length > 2000) throw new WebhookTargetError('The URL is longer than 2000 characters.');
  // A URL parser drops line breaks and encodes spaces: refuse them rather than store what was not meant.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
  if (/[\s\u0000-\u001f\u007f]/u.test(text)) throw new WebhookTargetError('The URL must not contain spaces, line breaks or other control characters.');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookTargetError('The URL is not a valid absolute URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookTargetError('The URL must use http or https.');
  if (url.username || url.password) throw new WebhookTargetError('The URL must not contain a user name or password.');
  return url;
}

/**
 * The addresses of a host (a name or a literal address) that a webhook may reach, or an error
 * naming why none may be used. A literal is checked without a lookup.
 */
export async function allowedAddresses(hostname: string, policy: TargetPolicy): Promise<string[]> {
  let addresses: string[];
  if (isIP(hostname)) {
    addresses = [hostname];
  } else {
    try {
      addresses = await (policy.resolve ?? systemResolver)(hostname);
    } catch {
      throw new WebhookTargetError(`The host ${hostname} does not resolve.`);
    }
    if (addresses.length === 0) throw new WebhookTargetError(`The host ${hostname} does not resolve.`);
  }
  if (!policy.allowPrivate) {
    const forbidden = addresses.find(isForbiddenAddress);
    if (forbidden !== undefined) {
      const what = isIP(hostname) ? `The address ${forbidden} is` : `The host ${hostname} resolves to ${forbidden},`;
      throw new WebhookTargetError(`${what} a loopback, private or otherwise internal address; webhooks must reach a public address.`);
    }
  }
  return addresses;
}

/** Checks a webhook URL at registration: its form, then every address its host resolves to. */
export async function checkWebhookUrl(text: string, policy: TargetPolicy): Promise<URL> {
  const url = parseWebhookUrl(text);
  await allowedAddresses(hostOf(url), policy);
  return url;
}

/**
 * A `lookup` for http(s).request that resolves with the policy's resolver and refuses the
 * connection when any address is internal: the check happens on the addresses actually connected to.
 */
export function guardedLookup(policy: TargetPolicy): LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    allowedAddresses(hostname.replace(/^\[|\]$/g, ''), policy).then(
      (addresses) => {
        const entries: LookupAddress[] = addresses.map((address) => ({ address, family: isIP(address) }));
        if (options?.all) callback(null, entries);
        else callback(null, entries[0]!.address, entries[0]!.family);
      },
      (error: unknown) => callback(error),
    );
  }) as LookupFunction;
}
