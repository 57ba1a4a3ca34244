/**
 * The error catalogue: every error a client can see, with its HTTP status and default message.
 * Domain code throws `AppError(code)`; the API's error handler turns it into `{error, message}`.
 */
export const ERRORS = {
  /** A send-template request whose template does not exist (spec 7: a body with only `message`). */
  template_not_found: { status: 400, message: 'Template not found.', messageOnly: true },
  /** A send-template request naming another user's template (spec 7: only `message`). */
  template_not_owned: { status: 400, message: 'Template does not belong to user.', messageOnly: true },
  /** A custom variable of the template is absent from `variables` (spec 7: only `message`). */
  missing_variable: { status: 400, message: 'Missing variable.', messageOnly: true },
  /** The request's shape is wrong: a missing or unknown field, a wrong type, a bad query value. */
  invalid_request: { status: 400, message: 'The request is not valid.' },
  /** A recipient is not an E.164 number (`^\+[1-9]\d{1,14}$`). */
  invalid_phone_number: { status: 400, message: 'Phone number must be in E.164 format' },
  /** More recipients after group expansion than MAX_RECIPIENTS. */
  too_many_recipients: { status: 400, message: 'Too many recipients in one request.' },
  /** A group id that does not exist or belongs to another user. */
  group_not_found: { status: 400, message: 'Group not found.' },
  /** A named device that does not exist, belongs to another user or is disabled. */
  device_not_found: { status: 400, message: 'Device not found or not enabled.' },
  /** An encrypted send (SMS Gate's end-to-end encryption) naming a device that is not an SMS Gate phone, or by a user with none. */
  encrypted_needs_sms_gate: { status: 400, message: 'Encrypted messages can only be sent by SMS Gate phones.' },
  /** A contact id in a request that is not one of the caller's contacts. */
  contact_not_found: { status: 400, message: 'Contact not found.' },
  /** A webhook URL that is not http(s), or whose host is internal or does not resolve. */
  invalid_webhook_url: { status: 400, message: 'The webhook URL is not allowed.' },
  /** Missing or invalid credentials. */
  unauthorized: { status: 401, message: 'Authentication required' },
  /** The monthly quota cannot cover every message of the request. */
  quota_exceeded: { status: 402, message: 'Monthly message quota exceeded' },
  /** Valid credentials of a kind the operation does not accept, or a scoped token without the route's scope (`scope required: <scope>`). */
  forbidden: { status: 403, message: 'This operation requires an API key.' },
  /** A resource that does not exist or that the caller may not see. */
  not_found: { status: 404, message: 'Not found' },
  /** The path exists, but not with this method; the `Allow` header lists the methods it has. */
  method_not_allowed: { status: 405, message: 'This method is not allowed on this path.' },
  /** The request (headers and body) did not arrive within REQUEST_TIMEOUT_SECONDS. */
  request_timeout: { status: 408, message: 'The request did not arrive in time.' },
  /** The caller already has a contact with this phone number. */
  contact_exists: { status: 409, message: 'A contact with this phone number already exists.' },
  /** The operation needs an enabled webhook endpoint. */
  webhook_disabled: { status: 409, message: 'The webhook endpoint is disabled; enable it first.' },
  /** The user has the most webhook endpoints allowed (20) already. */
  webhook_limit_reached: { status: 409, message: 'The limit of webhook endpoints is reached; delete one first.' },
  /** A cancel of a message that a device already has in hand and cannot take back (or that is final). */
  not_cancellable: { status: 409, message: 'The message cannot be cancelled: a device already has it, or it is final.' },
  /** A send named by a client id (SMS Gate's message `id`) that the user gave an earlier send already. */
  message_exists: { status: 409, message: 'A message with the same ID already exists.' },
  /** The Idempotency-Key is still being processed by an earlier request. */
  idempotency_key_in_use: { status: 409, message: 'A request with this Idempotency-Key is still in progress.' },
  /** The request body is larger than the server accepts. */
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  /** The request line is longer than the server reads, or a path segment longer than 100 characters. */
  uri_too_long: { status: 414, message: 'The request URI is too long.' },
  /** The request body is not JSON. */
  unsupported_media_type: { status: 415, message: 'Content-Type must be application/json.' },
  /** The Idempotency-Key was used before with another request body. */
  idempotency_key_reused: { status: 422, message: 'This Idempotency-Key was used with a different request.' },
  /** Too many requests from one credential or address. */
  rate_limited: { status: 429, message: 'Too many requests, slow down.' },
  /** The request line and headers together are larger than the server reads (Node's 16 KiB). */
  headers_too_large: { status: 431, message: 'The request headers are too large.' },
  /** An unexpected failure; details are logged, never sent. */
  internal_error: { status: 500, message: 'Internal server error' },
  /** An endpoint of a device protocol that smsgw does not offer (the SMS Gate app's user account calls). */
  not_implemented: { status: 501, message: 'Not implemented.' },
  /** A dependency (Postgres, Redis) cannot take the request now; retrying later is safe. */
  service_unavailable: { status: 503, message: 'The service cannot take this request right now; retry later.' },
  /** No device of the user is available to send. */
  no_devices: { status: 503, message: 'No devices available to send messages' },
} as const satisfies Record<string, { status: number; message: string; messageOnly?: true }>;

export type ErrorCode = keyof typeof ERRORS;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Sent as `Retry-After`: when trying again may succeed (503, the 409 of a key in flight). */
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message?: string, options: { retryAfterSeconds?: number } = {}) {
    super(message ?? ERRORS[code].message);
    this.name = 'AppError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.retryAfterSeconds = options.retryAfterSeconds ?? (code === 'service_unavailable' ? 5 : undefined);
  }

  /** The response body: `{error, message}`, or `{message}` for the spec's send-template errors. */
  body(): Record<string, string> {
    return 'messageOnly' in ERRORS[this.code] ? { message: this.message } : { error: this.code, message: this.message };
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
