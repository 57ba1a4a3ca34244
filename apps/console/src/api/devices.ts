import type { components } from '@smsgw/client/openapi-schema';
import { api, ok } from './client.ts';

export type Device = components['schemas']['Device'];

/** Devices a page of the console asks for: the API's largest page. */
const PAGE = 500;

/**
 * The user's devices, oldest first, following `next_cursor` page after page: all of them, or the
 * first `pages` pages; `more` says whether devices follow those.
 */
export async function loadDevices(pages = Number.POSITIVE_INFINITY): Promise<{ devices: Device[]; more: boolean }> {
  const devices: Device[] = [];
  let cursor: string | undefined;
  for (let read = 0; read < pages; read++) {
    const page = ok(await api.GET('/api/v1/devices', { params: { query: { limit: PAGE, ...(cursor && { cursor }) } } }));
    devices.push(...page.data);
    cursor = page.next_cursor;
    if (!cursor) return { devices, more: false };
  }
  return { devices, more: true };
}
