import { createParser } from 'eventsource-parser';
import { request } from './http.ts';

export interface ClaimedMessage {
  id: string;
  to: string;
  message: string;
  created_at: string;
  /** Send it before this moment or not at all: smsgw fails it after. */
  valid_until: string;
  /** The SIM slot to send from (1-3); null: the device's default. */
  sim_number: number | null;
}

export interface Report {
  id: string;
  /** `sending`: "I have it", the acknowledgement that stops the message being offered again. */
  status: 'sending' | 'sent' | 'delivered' | 'failed';
  error?: string;
  at?: string;
  /** With `failed`: the SMS provably never left the device, so smsgw may give it to another one. */
  retryable?: boolean;
}

/** An incoming SMS as a device reports it; `id` makes a repeat count once. */
export interface InboundSms {
  id?: string;
  from: string;
  to?: string;
  message: string;
  received_at: string;
  sim_number?: number;
}

/** What a device tells of itself in a heartbeat (docs/devices.md, "Health"); null: it does not know. */
export interface HeartbeatHealth {
  battery_level?: number | null;
  charging?: boolean | null;
  signal_dbm?: number | null;
  network?: 'registered' | 'roaming' | 'searching' | 'denied' | 'none' | 'no_sim' | null;
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

  /**
   * Up to `limit` of the device's messages, waiting up to `wait` seconds when there is none. A
   * message is offered again on every claim until the device reports anything about it, so the
   * device deduplicates by id.
   */
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

  /** Incoming SMS (1..500), each stored once per device and `id`. */
  inbound(messages: InboundSms[]): Promise<{ stored: number; duplicates: number }> {
    return request(this.baseUrl, this.auth, '/api/v1/device/inbound', { method: 'POST', body: { messages } });
  }

  /** Marks the device seen, with what it knows of its battery and signal (each field optional). */
  heartbeat(health?: HeartbeatHealth): Promise<{ status: 'ok'; server_time: string }> {
    return request(this.baseUrl, this.auth, '/api/v1/device/heartbeat', { method: 'POST', ...(health && { body: health }) });
  }

  /**
   * Opens the event stream and calls `onEvent` with each event name (`wakeup`) until `signal`
   * aborts or the stream ends; resolves when it ends, rejects when it cannot open.
   */
  async events(onEvent: (event: string) => void, signal: AbortSignal): Promise<void> {
    const res = await fetch(new URL('/api/v1/device/events', this.baseUrl), { headers: this.auth, signal });
    if (!res.ok || !res.body) throw new Error(`event stream refused: HTTP ${res.status}`);
    const parser = createParser({ onEvent: ({ event }) => event && onEvent(event) });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    } catch (error) {
      if (!signal.aborted) throw error;
    }
  }
}
