// queen-serverless <command>: what an operator runs from a shell against a deployment or its
// database. Errors are one line on stderr; exit 2 for a wrong call or missing configuration.
import { MIGRATE_USAGE, migrateCommand, RETENTION_USAGE, retentionCommand } from './database.js';
import { CliError } from './errors.js';
import { SMOKE_USAGE, smokeCommand } from './smoke.js';
import { TOKEN_USAGE, tokenCommand } from './token.js';

const COMMANDS: Record<string, { usage: string; run: (args: string[], env: NodeJS.ProcessEnv) => Promise<void> }> = {
  token: { usage: TOKEN_USAGE, run: tokenCommand },
  smoke: { usage: SMOKE_USAGE, run: smokeCommand },
  migrate: { usage: MIGRATE_USAGE, run: migrateCommand },
  retention: { usage: RETENTION_USAGE, run: retentionCommand },
};

const HELP = `usage: queen-serverless <command> [options]\n\n${Object.values(COMMANDS)
  .map((c) => c.usage)
  .join('\n\n')}\n`;

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(HELP);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) throw new CliError(`unknown command "${name}"; the commands are ${Object.keys(COMMANDS).join(', ')} (see --help)`);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${command.usage}\n`);
    return 0;
  }
  await command.run(args, process.env);
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  // parseArgs reports unknown or malformed options as TypeErrors with ERR_PARSE_ARGS_* codes.
  const usage = err instanceof CliError || String((err as { code?: string }).code).startsWith('ERR_PARSE_ARGS');
  process.stderr.write(`queen-serverless: ${(err as Error).message}\n`);
  process.exitCode = err instanceof CliError ? err.exitCode : usage ? 2 : 1;
}
