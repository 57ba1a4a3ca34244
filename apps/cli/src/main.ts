import { runSmsgw } from './run.ts';

// `./pnpmw smsgw <command>`: operator commands (the bin of this package: pnpm prints no banner before
// a bin). The whole run is run.ts; this passes it the process's arguments, environment and streams.
process.exitCode = await runSmsgw(process.argv.slice(2), process.env, {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
