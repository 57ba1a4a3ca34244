import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A link between two hosts for the topology tests, where the kernel has no `netem`: a TCP forwarder
 * on the host side of a network namespace's link that holds every chunk for `delayMs` each way
 * before passing it on (in order: timers of one duration fire in the order they were set). It
 * counts round trips: a chunk from the client after the server's answer (or the first one of a
 * connection) starts one, so a pipeline of commands in one write is one round trip, as on a wire.
 */
export class DelayLink {
  /** Round trips the clients of this link started so far. */
  roundTrips = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly host: string,
    readonly port: number,
  ) {}

  /** Listens on `host` (a free port) and forwards each connection to `target`. */
  static async open(options: { host: string; target: { host: string; port: number }; delayMs: number }): Promise<DelayLink> {
    const server = createServer();
    const address = await new Promise<{ port: number }>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, options.host, () => resolve(server.address() as { port: number }));
    });
    const link = new DelayLink(server, options.host, address.port);
    server.on('connection', (client) => link.forward(client, options.target, options.delayMs));
    return link;
  }

  private forward(client: Socket, target: { host: string; port: number }, delayMs: number): void {
    const server = connect(target);
    client.setNoDelay(true);
    server.setNoDelay(true);
    this.sockets.add(client).add(server);
    let answered = true;
    const pass = (from: Socket, to: Socket, fromClient: boolean) => {
      from.on('data', (chunk) => {
        if (fromClient && answered) this.roundTrips++;
        answered = !fromClient;
        setTimeout(() => to.writable && to.write(chunk), delayMs);
      });
      // An end or a reset crosses the link after the data before it.
      from.on('end', () => setTimeout(() => to.end(), delayMs));
      from.on('error', () => setTimeout(() => to.destroy(), delayMs));
      from.on('close', () => {
        this.sockets.delete(from);
        setTimeout(() => to.destroy(), delayMs);
      });
    };
    pass(client, server, true);
    pass(server, client, false);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
