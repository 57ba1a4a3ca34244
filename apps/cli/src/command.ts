import type { CliContext } from './context.ts';
import type { Flags } from './flags.ts';

/** One `noun verb` of the CLI: its usage line (which also says what flags it takes) and what it does. */
export interface Command {
  usage: string;
  /** Returns the one JSON document the command prints on stdout. */
  run(context: CliContext, flags: Flags): Promise<object>;
}

/** The flags a command takes: the `--name`s of its usage line. */
export function flagsOf(command: Command): string[] {
  return [...command.usage.matchAll(/--([a-z-]+)/g)].map((match) => match[1] as string);
}
