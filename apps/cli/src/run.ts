import { parseArgs } from 'node:util';
import { CliConfigSchema, loadConfig } from '@smsgw/config';
import { flagsOf, type Command } from './command.ts';
import { COMMANDS } from './commands/index.ts';
import { CliContext, type CliOutput } from './context.ts';
import { EXIT_CODES, toCliError, usageError } from './errors.ts';
import type { Flags } from './flags.ts';

// One run of `smsgw <command>`: the bin (main.ts) passes the process's arguments, environment and
// streams; tests run it in-process. The output carries exactly one JSON document, the result; a
// failure is one JSON line {error, message} on the error stream and an exit code of its kind.

const FLAGS = [...new Set(Object.values(COMMANDS).flatMap(flagsOf))];

const HELP = [
  'usage: ./pnpmw smsgw <command> [--flag value …]',
  '',
  'commands:',
  ...Object.values(COMMANDS).map((command) => `  ${command.usage}`),
  '',
  'USER is a user id or a user name. Each command prints one JSON document on stdout;',
  'lists print {"data": [...]} as the API does. A failure prints {"error", "message"} on stderr.',
  '',
  'exit codes:',
  '  0  done',
  ...Object.values(EXIT_CODES).map(({ exit, meaning }) => `  ${exit}  ${meaning}`),
].join('\n');

/** The command and its flags, or a usage error. */
function commandLine(args: string[]): { command: Command; name: string; flags: Flags } | 'help' {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: { ...Object.fromEntries(FLAGS.map((flag) => [flag, { type: 'string' as const }])), help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    // An unknown option, or a value that looks like one (`--quota -5`).
    throw usageError((error as Error).message);
  }
  const { positionals, values } = parsed;
  const name = positionals.join(' ');
  const command = COMMANDS[name];
  if (values.help) return 'help';
  if (!command) {
    throw usageError(positionals.length === 0 ? 'no command given; smsgw --help lists them' : `unknown command '${name}'; smsgw --help lists the commands`);
  }
  const { help: _help, ...flags } = values as Flags & { help?: boolean };
  const accepted = flagsOf(command);
  const stray = Object.keys(flags).find((flag) => !accepted.includes(flag));
  if (stray !== undefined) throw usageError(`${name} takes no --${stray}; usage: ${command.usage}`);
  return { command, name, flags };
}

/** Runs one command line against `env`, writing to `output`; resolves to the exit code. */
export async function runSmsgw(args: string[], env: Record<string, string | undefined>, output: CliOutput): Promise<number> {
  let context: CliContext | undefined;
  try {
    const line = commandLine(args);
    if (line === 'help') {
      output.stderr(`${HELP}\n`);
      return 0;
    }
    context = new CliContext(loadConfig(CliConfigSchema, env), output);
    const result = await line.command.run(context, line.flags);
    output.stdout(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (error) {
    const failure = toCliError(error);
    output.stderr(`${JSON.stringify({ error: failure.code, message: failure.message })}\n`);
    return EXIT_CODES[failure.kind].exit;
  } finally {
    await context?.close().catch(() => undefined);
  }
}
