// Command output quoted in the docs, held to what the command prints: `…` stands for anything
// (ids, timestamps, counts that grow), every other character is literal.
import { expect } from 'vitest';

export const matcher = (expected: string) =>
  new RegExp(
    `^${expected
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );

/** Each expected line (`…` standing for anything) matches some line of `printed`. */
export function expectPrinted(expected: readonly string[], printed: string, what: string): void {
  const lines = printed.split('\n');
  for (const line of expected) {
    expect(
      lines.some((l) => matcher(line).test(l)),
      `${what} should print\n  ${line}\nbut printed\n${printed}`,
    ).toBe(true);
  }
}

/** The `# → ` lines that follow the line that is exactly `command` in `doc`, until the next command. */
export function quotedAfter(doc: string, command: string): string[] {
  const lines = doc.split('\n');
  const at = lines.findIndex((l) => l === command);
  if (at < 0) throw new Error(`the doc has no line with ${command}`);
  const out: string[] = [];
  for (const line of lines.slice(at + 1)) {
    if (!line.startsWith('# → ')) break;
    out.push(line.slice('# → '.length));
  }
  return out;
}

/** The lines of the ```text block that follows the first line holding `marker`. */
export function textBlockAfter(doc: string, marker: string): string[] {
  const from = doc.indexOf(marker);
  if (from < 0) throw new Error(`the doc has no ${marker}`);
  const m = /```text\n([\s\S]*?)```/.exec(doc.slice(from));
  if (!m) throw new Error(`no text block after ${marker}`);
  return m[1]!.trimEnd().split('\n');
}
