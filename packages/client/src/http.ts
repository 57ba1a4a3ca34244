/** A failed call: the HTTP status and the API's `{error, message}` body. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** JSON over fetch with one credential header, errors as `ApiError`. */
export async function request<T>(baseUrl: string, auth: Record<string, string>, path: string, options: RequestOptions = {}): Promise<T> {
  const url = new URL(path, baseUrl);
  for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(key, String(value));
  const res = await fetch(url, {
    method: options.method ?? 'GET',
    headers: { ...auth, ...(options.body !== undefined && { 'content-type': 'application/json' }), ...options.headers },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: options.signal,
  });
  const text = await res.text();
  const json = text ? (JSON.parse(text) as unknown) : undefined;
  if (!res.ok) {
    const body = (json ?? {}) as { error?: string; message?: string };
    throw new ApiError(res.status, body.error, body.message ?? `HTTP ${res.status}`);
  }
  return json as T;
}
