import { existsSync, readFileSync, statSync } from 'node:fs';
import { posix } from 'node:path';
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
  profiles?: string[];
  volumes?: string[];
}

const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
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
    const always = Object.keys(services).filter((name) => !services[name]!.profiles);
    expect(always.sort()).toEqual(['api', 'dispatcher', 'migrate', 'postgres', 'redis']);
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

describe('docker-compose.yml, the monitoring profile', () => {
  const MONITORING = ['grafana', 'prometheus'];
  /** The bind mounts of a service: the file or folder of the repository, and where it is mounted. */
  const mounts = (name: string) =>
    (services[name]!.volumes ?? [])
      .map((volume) => volume.split(':'))
      .filter(([source]) => source!.startsWith('./'))
      .map(([source, target, mode]) => ({ source: source!.slice(2), target: target!, mode }));
  const mountedAt = (name: string, source: string) => mounts(name).find((m) => m.source === source)?.target;
  const yamlFile = (path: string) => parse(readFileSync(path, 'utf8'));

  it('starts Prometheus and Grafana only with --profile monitoring, reachable on loopback only', () => {
    expect(
      Object.keys(services)
        .filter((name) => services[name]!.profiles?.includes('monitoring'))
        .sort(),
    ).toEqual(MONITORING);
    for (const name of MONITORING) {
      expect(services[name]!.profiles, name).toEqual(['monitoring']);
      for (const port of services[name]!.ports ?? []) expect(port, name).toMatch(/^127\.0\.0\.1:/);
      // A named volume keeps the data; every one a service names is declared.
      for (const volume of services[name]!.volumes ?? []) if (!volume.startsWith('./')) expect(compose.volumes, volume).toHaveProperty(volume.split(':')[0]!);
    }
  });

  it('mounts files of the repository that exist, read-only, a file on a file and a folder on a folder', () => {
    for (const name of MONITORING) {
      expect(mounts(name).length, name).toBeGreaterThan(0);
      for (const { source, target, mode } of mounts(name)) {
        expect(existsSync(source), source).toBe(true);
        expect(mode, source).toBe('ro');
        expect(statSync(source).isFile(), `${source} -> ${target}`).toBe(/\.ya?ml$/.test(target));
      }
    }
  });

  it('gives Prometheus its config and, beside it, every rule file the config names', () => {
    const configPath = services.prometheus!.command!.find((arg) => arg.startsWith('--config.file='))!.split('=')[1]!;
    expect(mountedAt('prometheus', 'deploy/prometheus/prometheus.yml')).toBe(configPath);
    const config = yamlFile('deploy/prometheus/prometheus.yml') as { rule_files: string[] };
    expect(config.rule_files.length).toBeGreaterThan(0);
    for (const file of config.rule_files)
      expect(mountedAt('prometheus', posix.join('deploy/prometheus', file)), file).toBe(posix.join(posix.dirname(configPath), file));
  });

  it('scrapes the API on its PORT and every dispatcher replica on its METRICS_PORT', () => {
    const config = yamlFile('deploy/prometheus/prometheus.yml') as {
      scrape_configs: { job_name: string; static_configs?: { targets: string[] }[]; dns_sd_configs?: { names: string[]; type: string; port: number }[] }[];
    };
    const job = (name: string) => config.scrape_configs.find((c) => c.job_name === name)!;
    expect(job('smsgw-api').static_configs).toEqual([{ targets: [`api:${services.api!.environment!.PORT}`] }]);
    expect(services.dispatcher!.environment!.METRICS_HOST).toBe('0.0.0.0');
    expect(job('smsgw-dispatcher').dns_sd_configs).toEqual([
      expect.objectContaining({ names: ['dispatcher'], type: 'A', port: Number(services.dispatcher!.environment!.METRICS_PORT) }),
    ]);
  });

  it("provisions Grafana with the profile's Prometheus and the dashboards of deploy/grafana/dashboards", () => {
    const datasources = yamlFile('deploy/grafana/provisioning/datasources/smsgw.yml') as { datasources: { type: string; url: string }[] };
    expect(datasources.datasources).toEqual([expect.objectContaining({ type: 'prometheus', url: 'http://prometheus:9090' })]);
    expect(services.prometheus!.ports).toEqual(['127.0.0.1:9090:9090']);
    expect(mountedAt('grafana', 'deploy/grafana/provisioning/datasources')).toBe('/etc/grafana/provisioning/datasources');
    expect(mountedAt('grafana', 'deploy/grafana/provisioning/dashboards')).toBe('/etc/grafana/provisioning/dashboards');
    const dashboards = yamlFile('deploy/grafana/provisioning/dashboards/smsgw.yml') as { providers: { type: string; options: { path: string } }[] };
    expect(dashboards.providers).toEqual([expect.objectContaining({ type: 'file' })]);
    expect(mountedAt('grafana', 'deploy/grafana/dashboards')).toBe(dashboards.providers[0]!.options.path);
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
