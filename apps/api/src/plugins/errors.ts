import { maxHeaderSize, STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, ERRORS, isAppError, isUnavailable, type ErrorCode } from '@smsgw/core';

interface ValidationIssue {
  keyword: string;
  schemaPath?: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

const PART_NAMES: Record<string, string> = {
  body: 'field',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

/** Turns a schema validation error into a sentence that names the field. */
export function describeValidation(issues: ValidationIssue[], context: string | undefined): string {
  const issue = issues[0];
  const part = PART_NAMES[context ?? 'body'] ?? 'field';
  if (!issue) return 'The request is not valid.';
  const path = issue.instancePath
    .split('/')
    .filter(Boolean)
    .map((segment, i) => (/^\d+$/.test(segment) ? `[${segment}]` : i === 0 ? segment : `.${segment}`))
    .join('');
  if (issue.keyword === 'required') {
    const names = (issue.params.requiredProperties as string[] | undefined) ?? [];
    const field = [path, names[0]].filter(Boolean).join('.');
    return `Missing required ${part} '${field}'.`;
  }
  if (issue.keyword === 'nul' && issue.params.inName) {
    return path ? `Invalid ${part} '${path}': a name in it contains a NUL character (U+0000).` : `A ${part} name contains a NUL character (U+0000).`;
  }
  if (issue.keyword === 'boolean' && issue.schemaPath?.endsWith('/additionalProperties')) {
    return `Unknown ${part} '${path}'.`;
  }
  if (issue.keyword === 'additionalProperties') {
    const names = (issue.params.additionalProperties as string[] | undefined) ?? [];
    const field = [path, names[0]].filter(Boolean).join('.');
    return `Unknown ${part} '${field}'.`;
  }
  if (!path) return context === 'body' ? `The request body ${issue.message ?? 'is not valid'}.` : `Invalid ${part}: ${issue.message}.`;
  return `Invalid ${part} '${path}': ${issue.message ?? 'not valid'}.`;
}

export type ErrorBodyShape = { error?: string; message: string };

// What a client is told to wait before it tries again after a 503 of ours.
const RETRY_AFTER_UNAVAILABLE_SECONDS = 5;

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_request',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_request',
};

/**
 * What an error answers: `AppError`s and validation errors as the spec's `{error, message}`;
 * anything unexpected as a 500 whose details stay in the log. The one place where errors become
 * responses (a client-compatibility API reshapes the body: routes/compat/).
 */
export function errorResponse(
  app: FastifyInstance,
  error: FastifyError | AppError,
  request: FastifyRequest,
): { status: number; headers: Record<string, string>; body: ErrorBodyShape } {
  if (isAppError(error)) {
    const headers: Record<string, string> = error.retryAfterSeconds === undefined ? {} : { 'retry-after': String(error.retryAfterSeconds) };
    return { status: error.status, headers, body: error.body() as ErrorBodyShape };
  }
  if (error.validation) {
    const message = describeValidation(error.validation as ValidationIssue[], error.validationContext);
    return { status: 400, headers: {}, body: { error: 'invalid_request', message } };
  }
  const code = error.code ? FASTIFY_CODES[error.code] : undefined;
  if (code) {
    const message = code === 'invalid_request' ? `The request body is not valid JSON: ${error.message}` : ERRORS[code].message;
    return { status: ERRORS[code].status, headers: {}, body: { error: code, message } };
  }
  if (error.statusCode === 429) return { status: 429, headers: {}, body: new AppError('rate_limited').body() as ErrorBodyShape };
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return { status: error.statusCode, headers: {}, body: { error: 'invalid_request', message: error.message } };
  }
  if (isUnavailable(error)) {
    app.incidents.report('Postgres or Redis unavailable: answered 503', error);
    return {
      status: 503,
      headers: { 'retry-after': String(RETRY_AFTER_UNAVAILABLE_SECONDS) },
      body: new AppError('service_unavailable').body() as ErrorBodyShape,
    };
  }
  request.log.error({ err: error }, 'unhandled error');
  return { status: 500, headers: {}, body: new AppError('internal_error').body() as ErrorBodyShape };
}

/** Installs errorResponse as the error handler, and the 404 and 405 of unknown paths and methods. */
export const errorHandler = fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
      const { status, headers, body } = errorResponse(app, error, request);
      return reply.status(status).headers(headers).send(body);
    });

    const routes = new RouteMethods();
    app.addHook('onRoute', (route) => routes.add(route.url, route.method));

    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split('?')[0]!;
      const allow = routes.allowed(path);
      if (allow.length > 0 && !allow.includes(request.method)) {
        const message = `Method ${request.method} is not allowed on ${path}; it allows ${allow.join(', ')}.`;
        return reply.status(405).header('allow', allow.join(', ')).send({ error: 'method_not_allowed', message });
      }
      return reply.status(404).send({ error: 'not_found', message: `Route ${request.method} ${path} not found` });
    });
  },
  { name: 'error-handler' },
);

/**
 * The methods of every route path, so that a path that exists answers 405 with `Allow` to another
 * method instead of 404. Paths are matched as the router does: a `:param` is one non-empty segment,
 * `*` the rest, and duplicate slashes count as one (`ignoreDuplicateSlashes`).
 */
export class RouteMethods {
  private readonly routes = new Map<string, { pattern: RegExp; methods: Set<string> }>();

  add(url: string, method: string | string[]): void {
    const route = this.routes.get(url) ?? { pattern: pathPattern(url), methods: new Set<string>() };
    for (const m of [method].flat()) route.methods.add(m.toUpperCase());
    if (route.methods.has('GET')) route.methods.add('HEAD');
    this.routes.set(url, route);
  }

  /** The methods of the routes that match `path`, sorted; empty when no route does. */
  allowed(path: string): string[] {
    const normalised = path.replace(/\/{2,}/g, '/');
    const methods = new Set<string>();
    for (const { pattern, methods: own } of this.routes.values()) {
      if (pattern.test(normalised)) for (const m of own) methods.add(m);
    }
    return [...methods].sort();
  }
}

function pathPattern(url: string): RegExp {
  const source = url
    .split(/(:[A-Za-z0-9_]+(?:\([^)]*\))?|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source.replace(/\/{2,}/g, '/')}$`);
}

/**
 * A client-compatibility API's own error body (routes/compat/): made from smsgw's answer for the
 * requests under its path prefix, so that even the refusals before routing speak its dialect.
 */
export interface ErrorDialect {
  prefix: string;
  /** The peer's body for one of smsgw's errors: an object sent as JSON, or a text as the peer answers. */
  body: (status: number, body: ErrorBodyShape) => object | string;
}

/** The dialect of a request path (duplicate slashes count as one, as the router reads them), if any. */
export function dialectOf(dialects: readonly ErrorDialect[], url: string): ErrorDialect | undefined {
  const path = url.split('?')[0]!.replace(/\/{2,}/g, '/');
  return dialects.find((d) => path === d.prefix || path.startsWith(`${d.prefix}/`));
}

/**
 * Fastify's own refusals before routing (`frameworkErrors`): a path that is not valid
 * percent-encoded UTF-8, or a path parameter longer than the router reads (100 characters).
 */
export function frameworkErrors(dialects: readonly ErrorDialect[] = []) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const answer = (status: number, body: ErrorBodyShape) => reply.status(status).send(dialectOf(dialects, request.url)?.body(status, body) ?? body);
    if (error.code === 'FST_ERR_BAD_URL') {
      answer(400, { error: 'invalid_request', message: 'The URL path is not valid: a percent-encoded sequence is not UTF-8.' });
    } else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
      answer(414, { error: 'uri_too_long', message: 'A segment of the URL path is longer than 100 characters.' });
    } else {
      request.log.error({ err: error }, 'unhandled framework error');
      answer(500, new AppError('internal_error').body() as ErrorBodyShape);
    }
  };
}

/**
 * Errors of a connection before Fastify has a request (`clientErrorHandler`): Node answers them
 * itself with no body, so the spec's `{error, message}` is written on the socket here. A request
 * that did not arrive within REQUEST_TIMEOUT_SECONDS is a 408; a request line or headers over
 * Node's 16 KiB are 414 or 431; anything else Node cannot parse is a 400.
 */
export function clientErrorHandler(this: FastifyInstance, error: ConnectionError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const code = clientErrorCode(error);
  this.log.debug({ err: error, code }, 'client error');
  // As Node does: no answer when a response to this request has begun already.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const { status } = ERRORS[code];
    const body = JSON.stringify({ error: code, message: code === 'invalid_request' ? 'The request is not valid HTTP.' : ERRORS[code].message });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

function clientErrorCode(error: ConnectionError): ErrorCode {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  if (error.code === 'HPE_HEADER_OVERFLOW') return requestLineOverflowed(error.rawPacket) ? 'uri_too_long' : 'headers_too_large';
  return 'invalid_request';
}

/** Whether the data that overflowed Node's header limit starts a request whose request line takes most of it. */
function requestLineOverflowed(packet: unknown): boolean {
  if (!Buffer.isBuffer(packet) || !/^[A-Z]+ \S/.test(packet.toString('latin1', 0, 16))) return false;
  const end = packet.indexOf('\r\n');
  return (end === -1 ? packet.length : end) > maxHeaderSize / 2;
}
