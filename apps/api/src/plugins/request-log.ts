import type { FastifyRequest } from 'fastify';

// Query parameters whose values are credentials (`api_key`, `token`, `access_token`, …): refused,
// but the request log would show them in the URL.
const SECRET_PARAMETER = /key|token|secret|password|passwd|auth|signature|jwt|session/i;

// A phone's incoming-SMS webhook carries its secret in the path (routes/device-protocols/sms-gate/inbound.ts).
const INBOUND_SECRET = /(\/inbound\/[^/?]+\/)[^/?]+/;

/**
 * The request URL with the values of credential-like query parameters, and the secret of a phone's
 * incoming-SMS webhook path, replaced by `[REDACTED]`.
 */
export function redactUrl(rawUrl: string): string {
  const url = rawUrl.replace(INBOUND_SECRET, '$1[REDACTED]');
  const start = url.indexOf('?');
  if (start === -1) return url;
  const query = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const [name = ''] = pair.split('=', 1);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replaceAll('+', ' '));
      } catch {
        // A name that is not valid percent-encoding is matched as written.
      }
      return SECRET_PARAMETER.test(decoded) && pair.includes('=') ? `${name}=[REDACTED]` : pair;
    });
  return `${url.slice(0, start)}?${query.join('&')}`;
}

/** Fastify's request serializer, with the URL's credentials redacted. */
export function serializeRequest(request: FastifyRequest) {
  return { method: request.method, url: redactUrl(request.url), host: request.host, remoteAddress: request.ip, remotePort: request.socket?.remotePort };
}
