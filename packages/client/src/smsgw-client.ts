import type { DeviceProtocol, MessageRecord } from '@smsgw/core';
import { request } from './http.ts';

export interface SendResult {
  message_ids: string[];
  recipients_count: number;
  status: 'accepted';
  batch_id?: string;
}

export interface SendBody {
  recipients: string[];
  body: string;
  device_id?: string;
  group_ids?: string[];
  /** ISO 8601 with an offset: hold the messages until then. */
  send_at?: string;
  valid_until?: string;
  ttl_seconds?: number;
  sim_number?: number;
}

export interface DevicePage {
  data: DeviceRecord[];
  /** Present when more devices follow: pass as `cursor` for the next page. */
  next_cursor?: string;
}

export interface BatchCancelled {
  batch_id: string;
  cancelled: number;
  cancelling: number;
  not_cancelled: number;
  not_cancelled_ids: string[];
}

export interface MessagePage {
  data: MessageRecord[];
  /** Exact while total_exact; else the cap (1,000): more match. */
  total: number;
  total_exact: boolean;
  has_more: boolean;
  /** Pass as `cursor` for the next page. */
  next_cursor: string | null;
  limit: number;
  offset: number;
}

export interface ListFilter {
  status?: string;
  to?: string;
  batch_id?: string;
  device_id?: string;
  limit?: number;
  offset?: number;
  cursor?: string;
}

export interface DeviceRecord {
  id: string;
  name: string;
  enabled: boolean;
  protocol: DeviceProtocol;
  available: boolean;
  connection: 'stream' | 'requests' | null;
  last_seen_at: string | null;
  app_version: string | null;
  sim_cards: unknown[] | null;
  warnings: string[];
  /** docs/devices.md, "Health". */
  health: {
    status: 'online' | 'degraded' | 'offline';
    reasons: string[];
    last_seen_at: string | null;
    connection: 'stream' | 'poll' | null;
    app_version: string | null;
    battery: { level: number | null; charging: boolean | null } | null;
    signal: { dbm: number | null; network: string | null } | null;
  };
  created_at: string;
  updated_at: string;
}

/** The user side of the API, authenticated with an API key or a JWT. */
export class SmsgwClient {
  private readonly auth: Record<string, string>;

  constructor(
    private readonly baseUrl: string,
    credential: string,
  ) {
    this.auth = { authorization: `Bearer ${credential}` };
  }

  send(body: SendBody, idempotencyKey?: string): Promise<SendResult> {
    return request(this.baseUrl, this.auth, '/api/sms/send', {
      method: 'POST',
      body,
      headers: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {},
    });
  }

  getMessage(id: string): Promise<MessageRecord> {
    return request(this.baseUrl, this.auth, `/api/v1/sms/${encodeURIComponent(id)}`);
  }

  listMessages(filter: ListFilter = {}): Promise<MessagePage> {
    return request(this.baseUrl, this.auth, '/api/v1/sms', { query: { ...filter } });
  }

  /** Cancels a message no device sent yet: the record, cancelled (or still queued while its phone cancels it). */
  cancel(id: string): Promise<MessageRecord> {
    return request(this.baseUrl, this.auth, `/api/v1/sms/${encodeURIComponent(id)}/cancel`, { method: 'POST' });
  }

  cancelBatch(batchId: string): Promise<BatchCancelled> {
    return request(this.baseUrl, this.auth, `/api/v1/sms/batch/${encodeURIComponent(batchId)}/cancel`, { method: 'POST' });
  }

  /** One page of devices, oldest first (100 unless `limit` says otherwise); `next_cursor` when more follow. */
  listDevicesPage(page: { limit?: number; cursor?: string } = {}): Promise<DevicePage> {
    return request(this.baseUrl, this.auth, '/api/v1/devices', { query: { ...page } });
  }

  /** Every device, oldest first: the pages of listDevicesPage, cursor after cursor. */
  async listDevices(): Promise<{ data: DeviceRecord[] }> {
    const data: DeviceRecord[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.listDevicesPage({ limit: 500, cursor });
      data.push(...page.data);
      cursor = page.next_cursor;
    } while (cursor);
    return { data };
  }
}
