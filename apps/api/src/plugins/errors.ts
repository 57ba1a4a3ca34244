import type { FastifyError, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, ERRORS, isAppError, type ErrorCode } from '@smsgw/core';

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

// Postgres or Redis cannot take the request now, so it can be retried later: a 503, not a 500.
// Node's socket errors; Prisma's "cannot reach", "connection closed" and pool timeout (P1001, P1002,
// P1017, P2024); Postgres's connection exceptions (class 08) and its shutting-down or starting-up
// answers (57P01-57P03, "the database system is not yet accepting connections").
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE', 'P1001', 'P1002', 'P1017', 'P2024', '57P01', '57P02', '57P03',
]);
const UNAVAILABLE_MESSAGES = ["Stream isn't writeable", 'Connection terminated', 'not yet accepting connections', 'Connection is closed'];

/** Whether an error (or one it was caused by) says that Postgres or Redis is away for now. */
export function isUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const { code, message, cause, originalCode } = error as { code?: unknown; message?: unknown; cause?: unknown; originalCode?: unknown };
  for (const value of [code, originalCode]) {
    if (typeof value === 'string' && (UNAVAILABLE_CODES.has(value) || /^08\d{3}$/.test(value))) return true;
  }
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((text) => message.includes(text))) return true;
  return isUnavailable(cause, depth + 1);
}

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
 * The one place where errors become responses: `AppError`s and validation errors as the spec's
 * `{error, message}`; anything unexpected as a 500 whose details stay in the log.
 */
export const errorHandler = fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
      if (isAppError(error)) {
        if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
        return reply.status(error.status).send(error.body());
      }
      if (error.validation) {
        const message = describeValidation(error.validation as ValidationIssue[], error.validationContext);
        return reply.status(400).send({ error: 'invalid_request', message });
      }
      const code = error.code ? FASTIFY_CODES[error.code] : undefined;
      if (code) {
        const message = code === 'invalid_request' ? `The request body is not valid JSON: ${error.message}` : ERRORS[code].message;
        return reply.status(ERRORS[code].status).send({ error: code, message });
      }
      if (error.statusCode === 429) {
        return reply.status(429).send(new AppError('rate_limited').body());
      }
      if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
        return reply.status(error.statusCode).send({ error: 'invalid_request', message: error.message });
      }
      if (isUnavailable(error)) {
        request.log.warn({ err: error }, 'dependency unavailable');
        return reply.status(503).header('retry-after', String(RETRY_AFTER_UNAVAILABLE_SECONDS)).send(new AppError('service_unavailable').body());
      }
      request.log.error({ err: error }, 'unhandled error');
      return reply.status(500).send(new AppError('internal_error').body());
    });

    app.setNotFoundHandler((request, reply) => {
      reply.status(404).send({ error: 'not_found', message: `Route ${request.method} ${request.url.split('?')[0]} not found` });
    });
  },
  { name: 'error-handler' },
);
