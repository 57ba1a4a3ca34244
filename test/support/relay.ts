import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay between a device and the API that can stop forwarding without closing anything: the
 * network of a phone that left coverage. Both connections stay open, no FIN or RST goes either
 * way, and what the API writes is still accepted by the relay's socket, as a mobile network's
 * radio side would leave it.
 */
export interface Relay {
  /** The relay's own base URL (give it to the device as the API's). */
  url: string;
  /** Stops forwarding in both directions; the connections stay open. */
  stopForwarding(): void;
  close(): Promise<void>;
}

export async function startRelay(target: URL): Promise<Relay> {
  const sockets = new Set<Socket>();
  let forwarding = true;
  const forward = (from: Socket, to: Socket) =>
    from.on('data', (chunk: Buffer) => {
      if (forwarding) to.write(chunk);
    });
  const server: Server = createServer((device) => {
    const api = connect(Number(target.port), target.hostname);
    for (const socket of [device, api]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    forward(device, api);
    forward(api, device);
    // Until the relay stops forwarding, a close on one side is a close on the other.
    device.on('end', () => forwarding && api.end());
    api.on('end', () => forwarding && device.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    stopForwarding() {
      forwarding = false;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
