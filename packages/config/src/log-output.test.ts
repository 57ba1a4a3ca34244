import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { logStream } from './log-output.ts';

function collector(): { destination: Writable; text: () => string } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { destination, text: () => chunks.join('') };
}

const LINE = { level: 40, time: Date.UTC(2026, 10, 24, 7, 5, 9), pid: 1, hostname: 'h', service: 'api', msg: 'slow down' };

describe('logStream', () => {
  it('keeps JSON lines for json, and for auto when standard output is not a terminal', () => {
    expect(logStream('json', { isTty: true })).toBeUndefined();
    expect(logStream('auto', { isTty: false })).toBeUndefined();
  });

  it('turns a pino line into one readable line for pretty, and for auto on a terminal', () => {
    for (const isTty of [false, true]) {
      const out = collector();
      const stream = logStream(isTty ? 'auto' : 'pretty', { isTty, destination: out.destination });
      stream!.write(`${JSON.stringify(LINE)}\n`);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the terminal's colour codes, which begin with ESC.
      const text = out.text().replace(/\x1b\[[0-9;]*m/g, '');
      expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: slow down {.*}\n$/);
      expect(text).toContain('{"service":"api"}');
      expect(text).not.toContain('hostname');
    }
  });
});
