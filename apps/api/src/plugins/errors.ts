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

// Postgres or Redis cannot be reached (Prisma's P1001/P1002/P1017, node's socket errors): the request
// can be retried later, so it is a 503, not a 500.
const UNAVAILABLE_CODES = new Set(['P1001', 'P1002', 'P1017', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);

function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  const message = (error as { message?: unknown }).message;
  // ioredis refuses commands while disconnected when its offline queue is off.
  return typeof message === 'string' && message.includes("Stream isn't writeable");
}

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
        request.log.error({ err: error }, 'dependency unavailable');
        return reply.status(503).send(new AppError('service_unavailable').body());
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
