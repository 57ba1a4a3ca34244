import { createWriteStream, type WriteStream } from 'node:fs';

/**
 * `SIM_LOG_FILE`: one JSON line `{id, to, at, sim}` per message a simulated phone actually sent
 * (`sim`: the SIM slot it used), so that tests and the benchmark can prove no message was sent
 * twice, and each from the SIM it was sent for.
 */
export class SentLog {
  private readonly stream: WriteStream | undefined;

  constructor(path: string | undefined) {
    this.stream = path ? createWriteStream(path, { flags: 'a' }) : undefined;
  }

  write(line: { id: string; to: string; at: string; sim: number }): void {
    // One write per line on an O_APPEND file: lines of several phones in one file never interleave.
    this.stream?.write(`${JSON.stringify(line)}\n`);
  }

  close(): Promise<void> {
    const stream = this.stream;
    return new Promise((resolve) => (stream ? stream.end(resolve) : resolve()));
  }
}
