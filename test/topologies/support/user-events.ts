/** A user's live event stream (`GET /api/v1/events`) on one API process, read as it arrives. */
export interface UserEvents {
  /** The ids of the messages a `message.status` event said were delivered, in order. */
  delivered(): string[];
  close(): void;
}

/** Opens the stream of the key's user on `baseUrl` and resolves once the API says it is connected. */
export async function openUserEvents(baseUrl: string, key: string): Promise<UserEvents> {
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}/api/v1/events`, { headers: { 'x-api-key': key }, signal: abort.signal });
  if (!response.ok || !response.body) throw new Error(`event stream refused: HTTP ${response.status}`);
  const delivered: string[] = [];
  let buffer = '';
  let connected: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (connected = resolve));
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end = buffer.indexOf('\n\n');
      for (; end !== -1; end = buffer.indexOf('\n\n')) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (frame.startsWith(': connected')) connected();
        const data = /^event: message\.status\ndata: (.*)$/m.exec(frame)?.[1];
        const event = data ? (JSON.parse(data) as { id: string; status: string }) : undefined;
        if (event?.status === 'delivered') delivered.push(event.id);
      }
    }
  })().catch(() => undefined);
  await ready;
  return { delivered: () => [...delivered], close: () => abort.abort() };
}
