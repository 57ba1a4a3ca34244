import { parseArgs } from 'node:util';
import { CliConfigSchema, ConfigError, loadConfig } from '@smsgw/config';
import { createDb, type Db } from '@smsgw/db';
import { CliError, COMMANDS } from './commands.ts';

// `pnpm smsgw <command>`: operator commands, JSON on stdout, errors as JSON on stderr (exit 1).
const usage = `usage: pnpm smsgw <command>\n${Object.values(COMMANDS).map((c) => `  ${c.usage}`).join('\n')}`;

function parseCommandLine() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        name: { type: 'string' }, quota: { type: 'string' }, user: { type: 'string' }, limit: { type: 'string' }, device: { type: 'string' },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    // An unknown option or a value that looks like one (`--quota -5`): an operator error, not a crash.
    console.error(JSON.stringify({ error: (error as Error).message }));
    process.exit(1);
  }
}

const { positionals, values } = parseCommandLine();
const command = COMMANDS[positionals.slice(0, 2).join(' ')];
if (!command || values.help) {
  console.error(usage);
  process.exit(command || values.help ? 0 : 2);
}

let db: Db | undefined;
try {
  const config = loadConfig(CliConfigSchema);
  db = createDb({ url: config.DATABASE_URL, poolSize: 1 });
  const { help: _help, ...flags } = values;
  console.log(JSON.stringify(await command.run({ db, config }, flags)));
} catch (error) {
  // Operator mistakes and an unreachable database alike end as one JSON line, not a stack trace.
  const expected = error instanceof CliError || error instanceof ConfigError;
  console.error(JSON.stringify({ error: expected ? (error as Error).message : `unexpected error: ${(error as Error).message}` }));
  process.exitCode = 1;
} finally {
  await db?.$disconnect();
}
