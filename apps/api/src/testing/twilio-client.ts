import twilio from 'twilio';
import type RequestClient from 'twilio/lib/base/RequestClient.js';

/**
 * The published `twilio` library pointed at smsgw: its supported `httpClient` option, a
 * `RequestClient` that sends what the library addresses to api.twilio.com to `baseUrl` instead.
 */
export function twilioClient(baseUrl: string, username: string, password: string, accountSid = username) {
  class SmsgwRequestClient extends twilio.RequestClient {
    override request<TData>(opts: RequestClient.RequestOptions<TData>) {
      return super.request<TData>({ ...opts, uri: opts.uri.replace(/^https:\/\/api\.twilio\.com/, baseUrl) });
    }
  }
  return twilio(username, password, { accountSid, httpClient: new SmsgwRequestClient() });
}

/** The library's own check of an `X-Twilio-Signature`, as an application receiving smsgw's callbacks runs it. */
export const validateRequest: typeof twilio.validateRequest = (...args) => twilio.validateRequest(...args);

/** The published library itself, for tests outside this package (its `validateRequest` and `twiml`). */
export { twilio };
