// Everything the README and docs/ point at exists: each relative link's file, each #anchor (as
// GitHub derives it from a heading), each `npm run` script, `npx queen-serverless` command and file
// given to `npx tsx` or `node`. A line marked <!-- pending: … --> names work not merged yet and is
// left out until the coordinator drops the mark.
import { access, readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root } from '../support/server.js';

async function documents(): Promise<string[]> {
  const docs = (await readdir(join(root, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => join(root, 'docs', f));
  return [join(root, 'README.md'), ...docs];
}

/** The text outside fenced code blocks, line by line (fenced lines become empty, keeping numbers). */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

/** GitHub's anchor for a heading: the rendered text, lower-cased, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/<!--.*?-->|<[^>]+>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M} _-]/gu, '').replace(/ /g, '-');
}

function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of prose(text)) {
    const m = /^#{1,6} (.+)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    result.add(n === 0 ? base : `${base}-${n}`);
  }
  return result;
}

const exists = (path: string) => access(path).then(() => true, () => false);

/**
 * The lines a <!-- pending: … --> mark covers: its own, and the lines that continue it up to a blank
 * line or the next list item, table row or heading.
 */
function pendingLines(lines: string[]): Set<number> {
  const pending = new Set<number>();
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.includes('<!-- pending: ')) continue;
    pending.add(i);
    for (let k = i + 1; k < lines.length && lines[k]!.trim() !== '' && !/^\s*(- |\||#|\d+\. )/.test(lines[k]!); k++) pending.add(k);
  }
  return pending;
}

describe('the README and docs/', () => {
  it('link only to files and headings that exist', async () => {
    const broken: string[] = [];
    for (const file of await documents()) {
      const text = await readFile(file, 'utf8');
      const lines = prose(text);
      const pending = pendingLines(text.split('\n'));
      for (const [i, line] of lines.entries()) {
        if (pending.has(i)) continue;
        for (const [, target] of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
          if (/^[a-z]+:/.test(target!)) continue;
          const [path, anchor] = target!.split('#') as [string, string | undefined];
          const into = path === '' ? file : join(dirname(file), path);
          const where = `${relative(root, file)}:${i + 1} → ${target}`;
          if (!(await exists(into))) broken.push(`${where} (no such file)`);
          else if (anchor !== undefined && into.endsWith('.md') && !anchors(await readFile(into, 'utf8')).has(anchor)) {
            broken.push(`${where} (no such heading)`);
          }
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('name only npm scripts, CLI commands and files that exist', async () => {
    const scripts = Object.keys(JSON.parse(await readFile(join(root, 'package.json'), 'utf8')).scripts);
    const cli = [...(await readFile(join(root, 'cli/main.ts'), 'utf8')).matchAll(/^ {2}(\w+): \{ usage:/gm)].map((m) => m[1]);
    expect(cli).toContain('smoke');
    const missing: string[] = [];
    for (const file of await documents()) {
      const lines = (await readFile(file, 'utf8')).split('\n');
      const pending = pendingLines(lines);
      const text = lines.filter((_, i) => !pending.has(i)).join('\n');
      const where = relative(root, file);
      for (const [, script] of text.matchAll(/\bnpm run ([\w:-]+)/g)) if (!scripts.includes(script!)) missing.push(`${where}: npm run ${script}`);
      for (const [, command] of text.matchAll(/\bnpx (?:--yes )?queen-serverless ([a-z]+)/g)) {
        if (!cli.includes(command)) missing.push(`${where}: queen-serverless ${command}`);
      }
      for (const [, path] of text.matchAll(/\b(?:npx tsx|node) ((?:[\w.-]+\/)*[\w.-]+\.m?[jt]s)\b/g)) {
        if (!(await exists(join(root, path!)))) missing.push(`${where}: ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
