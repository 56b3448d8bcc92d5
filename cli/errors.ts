// How the CLI fails: a one-line message and an exit code, never a stack trace.
export class CliError extends Error {
  /** 2: the command was called wrongly or lacks configuration; 1: it ran and something failed. */
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 2,
  ) {
    super(message);
  }
}
