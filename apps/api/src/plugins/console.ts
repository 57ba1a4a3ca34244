import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';

/**
 * The web console (apps/console), a static single-page app served at /console/. Hashed assets
 * are cached for a year; index.html is revalidated on every load, so a new build shows at once.
 * Any other path under /console/ that is not a file is a client-side route: it gets index.html.
 * Without a build the API still starts, and /console/ says how to build it (503).
 */
export interface ConsoleOptions {
  /** The build's directory (default: apps/console/dist, found from the source or from the bundle in dist/). */
  root?: string;
}

const CANDIDATES = [
  new URL('../../../console/dist/', import.meta.url), // apps/api/src/plugins/console.ts
  new URL('../apps/console/dist/', import.meta.url), // dist/api.mjs
].map((url) => fileURLToPath(url));

export function consoleRoot(): string {
  return CANDIDATES.find((dir) => existsSync(join(dir, 'index.html'))) ?? CANDIDATES[0]!;
}

const NOT_BUILT = {
  error: 'service_unavailable',
  message: 'The console is not built: run `node scripts/build-console.mjs` (./pnpmw install runs it), then restart the API.',
};
// What the console's page may load: its own files, and the API it calls. uPlot sets inline styles.
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";
const hidden = { schema: { hide: true } };

function sendIndex(reply: FastifyReply) {
  return reply.header('cache-control', 'no-cache').header('content-security-policy', CSP).sendFile('index.html');
}

export async function consoleApp(app: FastifyInstance, options: ConsoleOptions = {}): Promise<void> {
  const root = options.root ?? consoleRoot();
  app.get('/console', hidden, (_request, reply) => reply.redirect('/console/', 301));
  if (!existsSync(join(root, 'index.html'))) {
    app.log.warn({ root }, 'the console is not built: /console/ answers 503');
    const notBuilt = (_request: unknown, reply: FastifyReply) => reply.status(503).send(NOT_BUILT);
    app.get('/console/', hidden, notBuilt);
    app.get('/console/*', hidden, notBuilt);
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/console/',
    index: false,
    wildcard: false,
    schemaHide: true,
    // Vite names every file under assets/ by the hash of its content.
    setHeaders: (reply, path) => reply.header('cache-control', path.startsWith(join(root, 'assets')) ? 'public, max-age=31536000, immutable' : 'no-cache'),
  });
  app.get('/console/', hidden, (_request, reply) => sendIndex(reply));
  app.get('/console/*', hidden, (request, reply) => {
    const path = (request.params as { '*': string })['*'];
    // A missing file (a path with an extension, or under assets/) is a 404, not the page.
    if (path.startsWith('assets/') || /\.[a-z0-9]+$/i.test(path)) {
      return reply.status(404).send({ error: 'not_found', message: `No file ${path} in the console.` });
    }
    return sendIndex(reply);
  });
}
