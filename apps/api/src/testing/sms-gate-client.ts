// The package ships ESM without `"type": "module"`: TypeScript reads it as CommonJS (its class one
// `default` deeper than at run time, where the bundler loads it as ESM), so the class is looked up.
import * as gate from 'android-sms-gateway';

type MessageState = gate.MessageState;
type GateClientClass = typeof gate.default.default;
const asClass = (value: unknown) => value as GateClientClass & { default?: unknown };
const GateClient: GateClientClass = typeof asClass(gate.default).default === 'function' ? asClass(asClass(gate.default).default) : asClass(gate.default);

/**
 * SMS Gate's npm client library (`android-sms-gateway`) against smsgw, for tests. The registry
 * serves 3.0.0, which takes the HTTP client from its caller and sends only Basic credentials; the
 * calls it lacks are made here exactly as the newer client in its repository sends them
 * (android-sms-gateway/client-ts `src/client.ts`: its default fetch client, `Bearer <token>` when
 * the login is empty, `listMessages` on `/messages`, `cancelMessage` as DELETE `/message/{id}`).
 */

/** The newer client's default HTTP client: JSON both ways, 204 as null, any other status an error with the body. */
export const fetchHttpClient = {
  get: async <T>(url: string, headers?: Record<string, string>): Promise<T> => handle(await fetch(url, { method: 'GET', headers })),
  post: async <T>(url: string, body: unknown, headers?: Record<string, string>): Promise<T> =>
    handle(await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) })),
  put: async <T>(url: string, body: unknown, headers?: Record<string, string>): Promise<T> =>
    handle(await fetch(url, { method: 'PUT', headers, body: JSON.stringify(body) })),
  patch: async <T>(url: string, body: unknown, headers?: Record<string, string>): Promise<T> =>
    handle(await fetch(url, { method: 'PATCH', headers, body: JSON.stringify(body) })),
  delete: async <T>(url: string, headers?: Record<string, string>): Promise<T> => handle(await fetch(url, { method: 'DELETE', headers })),
};

async function handle<T>(response: Response): Promise<T> {
  if (response.status === 204) return null as T;
  if (!response.ok) throw new Error(`HTTP error ${response.status}: ${await response.text()}`);
  const contentType = response.headers.get('Content-Type');
  return (contentType?.includes('application/json') ? await response.json() : await response.text()) as T;
}

/** The published library, Basic `login:password`, against smsgw's `/3rdparty/v1`. */
export function publishedClient(baseUrl: string, login: string, password: string): InstanceType<GateClientClass> {
  return new GateClient(login, password, fetchHttpClient, `${baseUrl}/3rdparty/v1`);
}

export interface ListOptions {
  from?: Date;
  to?: Date;
  state?: string;
  deviceId?: string;
  limit?: number;
  offset?: number;
  includeContent?: boolean;
  sort?: 'created_at' | '-created_at';
}

/** The newer client's calls, as it sends them; login '' means `Bearer <password>`. */
export function newerClient(baseUrl: string, login: string, password: string) {
  const base = `${baseUrl}/3rdparty/v1`;
  const headers: Record<string, string> = {
    'User-Agent': 'android-sms-gateway/3.0 (client; js)',
    Authorization: login === '' ? `Bearer ${password}` : `Basic ${btoa(`${login}:${password}`)}`,
  };
  return {
    send: (request: object) =>
      fetchHttpClient.post<MessageState & Record<string, unknown>>(`${base}/message`, request, { 'Content-Type': 'application/json', ...headers }),
    getState: (id: string) => fetchHttpClient.get<MessageState & Record<string, unknown>>(`${base}/message/${id}`, headers),
    cancelMessage: (id: string) => fetchHttpClient.delete<MessageState & Record<string, unknown>>(`${base}/message/${id}`, headers),
    /** `listMessages` as the newer client builds its URL; the raw response, for `X-Total-Count`. */
    listMessages: (options: ListOptions = {}) => {
      const url = new URL(`${base}/messages`);
      if (options.from) url.searchParams.append('from', options.from.toISOString());
      if (options.to) url.searchParams.append('to', options.to.toISOString());
      if (options.state) url.searchParams.append('state', options.state);
      if (options.deviceId) url.searchParams.append('deviceId', options.deviceId);
      if (options.limit !== undefined) url.searchParams.append('limit', options.limit.toString());
      if (options.offset !== undefined) url.searchParams.append('offset', options.offset.toString());
      if (options.includeContent !== undefined) url.searchParams.append('includeContent', options.includeContent.toString());
      if (options.sort) url.searchParams.append('sort', options.sort);
      return fetch(url.toString(), { method: 'GET', headers });
    },
    /** `listInboxMessages` as the newer client builds its URL; the raw response, for `X-Total-Count`. */
    listInboxMessages: (options: InboxOptions = {}) => {
      const url = new URL(`${base}/inbox`);
      if (options.type) url.searchParams.append('type', options.type);
      if (options.from) url.searchParams.append('from', options.from.toISOString());
      if (options.to) url.searchParams.append('to', options.to.toISOString());
      if (options.deviceId) url.searchParams.append('deviceId', options.deviceId);
      if (options.includeAttachments !== undefined) url.searchParams.append('includeAttachments', options.includeAttachments.toString());
      if (options.limit !== undefined) url.searchParams.append('limit', options.limit.toString());
      if (options.offset !== undefined) url.searchParams.append('offset', options.offset.toString());
      return fetch(url.toString(), { method: 'GET', headers });
    },
    /** `generateToken`: POST `/auth/token` with `{scopes, ttl?}`. */
    generateToken: (request: { scopes: string[]; ttl?: number }) =>
      fetchHttpClient.post<TokenResponse>(`${base}/auth/token`, request, { 'Content-Type': 'application/json', ...headers }),
    /** `revokeToken`: DELETE `/auth/token/{jti}`. */
    revokeToken: (jti: string) => fetchHttpClient.delete<void>(`${base}/auth/token/${jti}`, headers),
  };
}

export interface InboxOptions {
  type?: string;
  from?: Date;
  to?: Date;
  deviceId?: string;
  includeAttachments?: boolean;
  limit?: number;
  offset?: number;
}

export interface TokenResponse {
  id: string;
  token_type: string;
  access_token: string;
  refresh_token: string;
  expires_at: string;
}

/**
 * `RefreshToken` as client-go sends it (client-ts has no refresh call): POST `/auth/token/refresh`
 * with no body and the refresh token as the only credential.
 */
export function refreshToken(baseUrl: string, token: string): Promise<TokenResponse> {
  return fetchHttpClient.post<TokenResponse>(`${baseUrl}/3rdparty/v1/auth/token/refresh`, undefined, { Authorization: `Bearer ${token}` });
}

export { decryptAsApp, encryptValue } from './sms-gate-encryption.ts';
