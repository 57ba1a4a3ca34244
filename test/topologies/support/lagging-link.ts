import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * The primary's address as a replica in another zone sees it: a TCP forwarder in front of the
 * primary that passes every connection through at once, except a replica's (one that sent
 * REPLCONF or PSYNC), whose stream from the primary it holds for `delayMs`: that replica is always
 * `delayMs` behind. Sentinels, clients and the replica all use the forwarder's address, so the
 * Sentinels see the replica follow the primary they monitor (they would re-point it otherwise).
 * `cut` is the primary's host dying: what is still held never arrives, which is what Redis's
 * asynchronous replication loses in a failover unless the writer waited for a replica (WAIT).
 */
export class LaggingLink {
  private readonly sockets = new Set<Socket>();
  private readonly held = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Listens on a free port of 127.0.0.1 and forwards each connection to the primary on `targetPort`. */
  static async open(targetPort: number, delayMs: number): Promise<LaggingLink> {
    const server = createServer();
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    });
    const link = new LaggingLink(server, port);
    server.on('connection', (client) => link.forward(client, targetPort, delayMs));
    return link;
  }

  private forward(client: Socket, targetPort: number, delayMs: number): void {
    const primary = connect(targetPort, '127.0.0.1');
    let replica = false;
    for (const socket of [client, primary]) {
      socket.setNoDelay(true);
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        (socket === client ? primary : client).destroy();
      });
    }
    client.on('data', (chunk) => {
      replica ||= /REPLCONF|PSYNC/i.test(chunk.toString('latin1'));
      primary.write(chunk);
    });
    primary.on('data', (chunk) => {
      if (!replica) return void client.write(chunk);
      const timer = setTimeout(() => {
        this.held.delete(timer);
        if (client.writable) client.write(chunk);
      }, delayMs);
      this.held.add(timer);
    });
  }

  /** Drops what is held and closes every connection: nothing more passes. */
  cut(): void {
    for (const timer of this.held) clearTimeout(timer);
    this.held.clear();
    this.server.close();
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
