import { createParser } from 'eventsource-parser';
import { token } from './client.ts';

export interface StreamEvent {
  type: string;
  data: Record<string, unknown>;
}

/**
 * The user's live events (GET /api/v1/events) read with fetch, since EventSource cannot send the
 * Authorization header. Reconnects with a growing delay; `onOpen` runs on every (re)connection so
 * that a page re-reads what it shows (an event missed while away is not sent again).
 */
export function openEvents(handlers: { onEvent: (event: StreamEvent) => void; onOpen: () => void; onState?: (live: boolean) => void }): () => void {
  const controller = new AbortController();
  let delay = 500;
  const run = async () => {
    while (!controller.signal.aborted) {
      try {
        const current = token();
        if (!current) return;
        const res = await fetch('/api/v1/events', { headers: { authorization: `Bearer ${current}`, accept: 'text/event-stream' }, signal: controller.signal });
        if (res.status === 401) return;
        if (!res.ok || !res.body) throw new Error(`events: ${res.status}`);
        delay = 500;
        handlers.onState?.(true);
        handlers.onOpen();
        const parser = createParser({
          onEvent: (message) => {
            if (!message.event) return;
            try {
              handlers.onEvent({ type: message.event, data: JSON.parse(message.data) as Record<string, unknown> });
            } catch {
              // a malformed event is only a hint lost
            }
          },
        });
        const decoder = new TextDecoder();
        for await (const chunk of res.body) parser.feed(decoder.decode(chunk, { stream: true }));
      } catch {
        if (controller.signal.aborted) return;
      }
      handlers.onState?.(false);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 15_000);
    }
  };
  void run();
  return () => controller.abort();
}
