import createClient, { type Middleware } from 'openapi-fetch';
// The types packages/client generates from the API's OpenAPI document (scripts/openapi.ts); types only.
import type { paths } from '@smsgw/client/openapi-schema';

/**
 * The console's only way to the gateway: the public HTTP API, typed from its OpenAPI document
 * (schema.ts). The JWT lives in sessionStorage: it is the tab's, and gone when the tab closes.
 */
const TOKEN_KEY = 'smsgw.token';

export function token(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Why a session ended: the user signed out, or the API no longer takes the token (expired, key revoked). */
export type SignOutReason = 'signed_out' | 'expired';
const signedOut = new Set<(reason: SignOutReason) => void>();

/** Calls `listener` when the session ends. */
export function onSignedOut(listener: (reason: SignOutReason) => void): () => void {
  signedOut.add(listener);
  return () => signedOut.delete(listener);
}

export function signOut(reason: SignOutReason = 'signed_out'): void {
  sessionStorage.removeItem(TOKEN_KEY);
  for (const listener of [...signedOut]) listener(reason);
}

const auth: Middleware = {
  onRequest({ request }) {
    const current = token();
    if (current && !request.headers.has('authorization') && !request.headers.has('x-api-key')) request.headers.set('authorization', `Bearer ${current}`);
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401 && !request.headers.has('x-api-key') && token()) signOut('expired');
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: location.origin });
api.use(auth);

/** An error the API answered: `{error, message}` with its status. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The data of an openapi-fetch result, or throws its error as an ApiProblem. */
export function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok && result.data !== undefined) return result.data;
  if (result.response.ok && result.response.status === 204) return undefined as T;
  const body = (result.error ?? {}) as { error?: string; message?: string };
  throw new ApiProblem(result.response.status, body.error ?? 'http_error', body.message ?? `The API answered ${result.response.status}.`);
}

/** Exchanges an API key for a JWT and keeps it for this tab. */
export async function signIn(apiKey: string): Promise<void> {
  const data = ok(await api.POST('/api/v1/auth/token', { headers: { 'x-api-key': apiKey } }));
  sessionStorage.setItem(TOKEN_KEY, data.token);
}

/**
 * The form field an API error concerns: by its code, else the field its message names
 * (`Invalid field 'body'`, `Missing required field 'recipients'`), else none (shown over the form).
 */
export function fieldOf(problem: ApiProblem, byCode: Record<string, string>, fields: string[]): string | undefined {
  if (byCode[problem.code]) return byCode[problem.code];
  // The send-template errors of spec section 7 carry only a message.
  if (problem.code === 'http_error' && /variable/i.test(problem.message) && fields.includes('variables')) return 'variables';
  if (problem.code === 'http_error' && /template/i.test(problem.message) && fields.includes('template_id')) return 'template_id';
  const named = /'([A-Za-z_][\w.]*)'/.exec(problem.message)?.[1]?.split('.')[0];
  return named && fields.includes(named) ? named : undefined;
}
