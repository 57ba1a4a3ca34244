import type { MessageRecord } from '@smsgw/core';
import { request } from './http.ts';

export interface SendResult {
  message_ids: string[];
  recipients_count: number;
  status: 'accepted';
  batch_id?: string;
}

export interface MessagePage {
  data: MessageRecord[];
  total: number;
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
}

export interface DeviceRecord {
  id: string;
  name: string;
  enabled: boolean;
  protocol: 'native' | 'sms_gate';
  available: boolean;
  connection: 'stream' | 'requests' | null;
  last_seen_at: string | null;
  app_version: string | null;
  sim_cards: unknown[] | null;
  warnings: string[];
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

  send(body: { recipients: string[]; body: string; device_id?: string; group_ids?: string[] }, idempotencyKey?: string): Promise<SendResult> {
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

  listDevices(): Promise<{ data: DeviceRecord[] }> {
    return request(this.baseUrl, this.auth, '/api/v1/devices');
  }
}
