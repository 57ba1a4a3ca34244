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
