import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import * as env from '@smsgw/config';

/**
 * docker-compose.yml and the Dockerfile, read statically: Docker does not run on the machines that
 * test smsgw, so this holds what `docker compose config` and a first `up` would catch.
 */
interface Service {
  build?: string;
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  ports?: string[];
  container_name?: string;
}

const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as { services: Record<string, Service> };
const { services } = compose;
const dockerfile = readFileSync('Dockerfile', 'utf8');
const bundles = [...readFileSync('scripts/build.mjs', 'utf8').matchAll(/^\s+'?([\w-]+)'?: '(?:apps|packages)\/[^']+\.ts',$/gm)].map((m) => m[1]);
const SMSGW = ['migrate', 'api', 'dispatcher'];

/** Every variable that some smsgw process reads: the properties of every schema in the env module. */
const known = new Set(
  Object.values(env).flatMap((value) =>
    typeof value === 'object' && value !== null && 'properties' in value ? Object.keys((value as { properties: object }).properties) : [],
  ),
);

describe('docker-compose.yml', () => {
  it('has Postgres and Redis with health checks, and the smsgw processes built from this image', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'dispatcher', 'migrate', 'postgres', 'redis']);
    for (const name of ['postgres', 'redis', 'api']) expect(services[name]!.healthcheck?.test.length, name).toBeGreaterThan(0);
    expect(services.api!.healthcheck!.test.join(' ')).toContain('/ready');
    for (const name of SMSGW) {
      expect(services[name]!.build, name).toBe('.');
      expect(services[name]!.image, name).toBe('smsgw:local');
    }
  });

  it('migrates before any API or dispatcher starts, once Postgres answers', () => {
    expect(services.migrate!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    for (const name of ['api', 'dispatcher']) {
      expect(services[name]!.depends_on, name).toEqual({
        migrate: { condition: 'service_completed_successfully' },
        redis: { condition: 'service_healthy' },
      });
    }
  });

  it('runs the bundles that the build makes, with no package manager at run time', () => {
    expect(bundles).toEqual(expect.arrayContaining(['api', 'dispatcher', 'migrate', 'cli']));
    for (const name of SMSGW) {
      const command = services[name]!.command!;
      expect(command[0], name).toBe('node');
      const bundle = /^dist\/([\w-]+)\.mjs$/.exec(command.at(-1)!)?.[1];
      expect(bundles, `${name}: ${command.join(' ')}`).toContain(bundle);
    }
  });

  it('sets only variables that smsgw reads, and requires JWT_SECRET', () => {
    for (const name of SMSGW) {
      const unknown = Object.keys(services[name]!.environment ?? {}).filter((variable) => !known.has(variable));
      expect(unknown, name).toEqual([]);
    }
    expect(services.api!.environment!.JWT_SECRET).toMatch(/^\$\{JWT_SECRET:\?/);
    expect(services.api!.environment!.HOST).toBe('0.0.0.0');
  });

  it('lets dispatchers scale (--scale dispatcher=3): no fixed name or published port', () => {
    expect(services.dispatcher!.container_name).toBeUndefined();
    expect(services.dispatcher!.ports).toBeUndefined();
    expect(Object.values(services).some((s) => s.container_name)).toBe(false);
  });
});

describe('Dockerfile', () => {
  const lines = dockerfile.split('\n').filter((line) => line.trim() && !line.startsWith('#'));
  const index = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));

  it('builds as the unprivileged user the processes run as, so the CLI can rebuild its bundle', () => {
    expect(index(/^USER node$/)).toBeGreaterThan(-1);
    expect(index(/^USER node$/)).toBeLessThan(index(/^COPY /));
    for (const copy of lines.filter((line) => line.startsWith('COPY '))) expect(copy).toContain('--chown=node:node');
    expect(index(/^RUN .*install/)).toBeGreaterThan(index(/^USER node$/));
  });

  it("installs through ./pnpmw with corepack's signature check and prompt off", () => {
    expect(dockerfile).toMatch(/COREPACK_INTEGRITY_KEYS=0/);
    expect(dockerfile).toMatch(/COREPACK_ENABLE_DOWNLOAD_PROMPT=0/);
    // A bare `pnpm` would be a second download, by corepack, with its signature check on.
    expect(lines.filter((line) => /^(RUN|CMD)\b/.test(line) && /(^|[\s"&;])pnpm\b/.test(line))).toEqual([]);
    expect(dockerfile).toMatch(/RUN \.\/pnpmw install --frozen-lockfile && \.\/pnpmw build/);
  });

  it('copies everything the build and the bundles need', () => {
    for (const path of ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml', 'pnpmw', 'prisma', 'scripts', 'packages', 'apps']) {
      expect(
        lines.some((line) => line.startsWith('COPY ') && line.split(/\s+/).includes(path)),
        path,
      ).toBe(true);
    }
  });
});
