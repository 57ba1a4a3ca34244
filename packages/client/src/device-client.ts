import { request } from './http.ts';

export interface ClaimedMessage {
  id: string;
  to: string;
  message: string;
  created_at: string;
}

export interface Report {
  id: string;
  status: 'sent' | 'delivered' | 'failed';
  error?: string;
  at?: string;
}

export interface ReportsResult {
  accepted: number;
  rejected: { id: string; error: string; message: string }[];
}

/** The device side of the API, authenticated with a device token. */
export class DeviceClient {
  private readonly auth: Record<string, string>;

  constructor(
    private readonly baseUrl: string,
    token: string,
  ) {
    this.auth = { authorization: `Bearer ${token}` };
  }

  /** Claims up to `limit` assigned messages, waiting up to `wait` seconds when there is none. */
  async claim(options: { limit?: number; wait?: number; signal?: AbortSignal } = {}): Promise<ClaimedMessage[]> {
    const { messages } = await request<{ messages: ClaimedMessage[] }>(this.baseUrl, this.auth, '/api/v1/device/messages', {
      query: { limit: options.limit, wait: options.wait },
      signal: options.signal,
    });
    return messages;
  }

  report(reports: Report[]): Promise<ReportsResult> {
    return request(this.baseUrl, this.auth, '/api/v1/device/reports', { method: 'POST', body: { reports } });
  }

  heartbeat(): Promise<{ status: 'ok'; server_time: string }> {
    return request(this.baseUrl, this.auth, '/api/v1/device/heartbeat', { method: 'POST' });
  }

  /**
   * Opens the event stream and calls `onEvent` with each event name (`wakeup`) until `signal`
   * aborts or the stream ends; resolves when it ends, rejects when it cannot open.
   */
  async events(onEvent: (event: string) => void, signal: AbortSignal): Promise<void> {
    const res = await fetch(new URL('/api/v1/device/events', this.baseUrl), { headers: this.auth, signal });
    if (!res.ok || !res.body) throw new Error(`event stream refused: HTTP ${res.status}`);
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = block.split('\n').find((line) => line.startsWith('event:'))?.slice(6).trim();
          if (event) onEvent(event);
        }
      }
    } catch (error) {
      if (!signal.aborted) throw error;
    }
  }
}
