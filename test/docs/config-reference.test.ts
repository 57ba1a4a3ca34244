import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { END_MARKER, OPERATIONS_DOC, REGENERATE, START_MARKER, configReference, processSchemas, withConfigReference } from '../../scripts/config-docs.ts';

/** The configuration reference of docs/operations.md is generated from the env schema (scripts/config-docs.ts). */
function committedSection(text: string): string {
  const start = text.indexOf(START_MARKER);
  const end = text.indexOf(END_MARKER);
  expect(start, `docs/operations.md lacks ${START_MARKER}`).toBeGreaterThanOrEqual(0);
  expect(end, `docs/operations.md lacks ${END_MARKER}`).toBeGreaterThan(start);
  return text.slice(start + START_MARKER.length, end).trim();
}

describe('the configuration reference in docs/operations.md', () => {
  it('is what the script generates from packages/config/src/env.ts', () => {
    const committed = committedSection(readFileSync(OPERATIONS_DOC, 'utf8'));
    expect(committed, `docs/operations.md: the configuration reference is out of date; run ${REGENERATE}`).toBe(configReference());
  });

  it('has a row for every variable of every process, each once', () => {
    const reference = configReference();
    const rows = [...reference.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]);
    const processes = processSchemas();
    const variables = new Set(processes.flatMap(({ schema }) => Object.keys(schema.properties)));
    expect(processes.map((p) => p.process)).toEqual(expect.arrayContaining(['API', 'dispatcher', 'CLI', 'device simulator', 'modem agent']));
    expect(new Set(rows)).toEqual(variables);
    expect(rows.length).toBe(variables.size);
  });

  it('names the processes that read a variable, its default, and a required one as required', () => {
    const reference = configReference();
    expect(reference).toMatch(/^\| `DATABASE_URL` \| `postgresql:\/\/postgres@127\.0\.0\.1:5432\/smsgw` \| API, dispatcher, CLI, migrator \| /m);
    expect(reference).toMatch(/^\| `DATABASE_DIRECT_URL` \| unset \| API, migrator \| /m);
    expect(reference).toMatch(/^\| `JWT_SECRET` \| \*\*required\*\* \| API \| /m);
    expect(reference).toMatch(/^\| `METRICS_PORT` \| `0` \| dispatcher \| .*Integer, 0 to 65535\. \|$/m);
    expect(reference).toMatch(/^\| `TRUST_PROXY` \| unset \| API \| /m);
  });

  it('rewrites a stale section and leaves the rest of the file alone', () => {
    const stale = `# Title\n\nbefore\n${START_MARKER}\n| \`GONE\` | old |\n${END_MARKER}\nafter\n`;
    const rewritten = withConfigReference(stale);
    expect(rewritten).not.toContain('GONE');
    expect(rewritten.startsWith(`# Title\n\nbefore\n${START_MARKER}\n`)).toBe(true);
    expect(rewritten.endsWith(`\n${END_MARKER}\nafter\n`)).toBe(true);
    expect(committedSection(rewritten)).toBe(configReference());
    expect(withConfigReference(rewritten)).toBe(rewritten);
  });

  it('refuses a file without the markers', () => {
    expect(() => withConfigReference('# Operations\n\nno markers here\n')).toThrow(/lacks the markers/);
    expect(() => withConfigReference(`${END_MARKER}\n${START_MARKER}\n`)).toThrow(/lacks the markers/);
  });
});
