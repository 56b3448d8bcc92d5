// Everything the README and docs/ point at exists: each relative link's file, each #anchor (as
// GitHub derives it from a heading), each `npm run` script, `npx queen-serverless` command and file
// given to `npx tsx` or `node`. A line marked <!-- pending: … --> names work not merged yet and is
// left out until the coordinator drops the mark. The TypeScript and the documents cite the
// repository the same way: every path they name (docs/<file>.md#anchor, lib/…, bench/README.md)
// resolves, nothing outside the repository is cited as a document, and no issue numbers.
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

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

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
      for (const [, script] of text.matchAll(/\bnpm run ([\w:-]+)/g))
        if (!scripts.includes(script!)) missing.push(`${where}: npm run ${script}`);
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

/**
 * Every file of the repository ending in one of `extensions`, outside drizzle/ and test fixtures
 * (landed migrations keep their words), node_modules and build output.
 */
async function repositoryFiles(extensions: string[], dir = root): Promise<string[]> {
  const skip = ['node_modules', 'drizzle', 'fixtures', 'dist', 'coverage'];
  const entries = await readdir(dir, { withFileTypes: true });
  const found = await Promise.all(
    entries.map(async (e) => {
      const path = join(dir, e.name);
      if (e.isDirectory()) return e.name.startsWith('.') || skip.includes(e.name) ? [] : repositoryFiles(extensions, path);
      return extensions.some((x) => e.name.endsWith(x)) ? [path] : [];
    }),
  );
  return found.flat();
}

// The SQL function sources are code too: their comments become the functions' COMMENTs.
const typescript = () => repositoryFiles(['.ts', '.sql']);

// The documents the code first cited are not in the repository; docs/semantics.md's table maps
// their references to the sections that hold them now. Spelled so this file does not match itself.
const OLD_REFERENCE = /SPEC \u00a7|HARD-PART[S]|seed invarian[t]|storage-model see[d]/;

describe('the TypeScript outside drizzle/', () => {
  it('cites docs/ rather than the documents the project started from', async () => {
    const files = await typescript();
    expect(files.map((f) => relative(root, f))).toContain('lib/broker/names.ts');
    expect(files.map((f) => relative(root, f))).toContain('sql/functions/pop.sql');
    const cited: string[] = [];
    for (const file of files) {
      const where = relative(root, file);
      for (const [i, line] of (await readFile(file, 'utf8')).split('\n').entries()) {
        if (OLD_REFERENCE.test(line)) cited.push(`${where}:${i + 1}: ${line.trim()}`);
      }
    }
    expect(cited).toEqual([]);
  });
});

// A citation names a file of the repository by its path from the root (or, in a document, from
// the document's folder), or an all-capitals document such as the README; the folders it may
// start with are the repository's own, including ones a branch adds.
const FOLDERS = ['bench', 'bin', 'cli', 'client', 'docs', 'drizzle', 'examples', 'functions', 'lib', 'scripts', 'sql', 'support', 'test'];
const EXTENSION = '(?:ts|js|mjs|md|sql|json|jsonc|sh|ya?ml|toml)';
const FILE = `(?:${FOLDERS.join('|')})/(?:[\\w.-]+/)*[\\w.-]*\\w\\.${EXTENSION}`;
const CITED_PATH = new RegExp(`(?<![\\w./@-])(${FILE})(?:#([\\w-]+))?(?![\\w/])`, 'g');
const CITED_DOCUMENT = /(?<![\w./-])([A-Z][A-Z0-9_-]*\.md)(?:#([\w-]+))?\b/g;
// An issue or pull-request number: "issue", "PR" or "#" and digits, not a Markdown anchor such as
// (#3-secrets). The reasoning belongs in docs/, where a reader of the repository can follow it.
const ISSUE = /\b(?:[Ii]ssues?|PR|[Pp]ull request) #?\d+|(?<![\w&#(/'"`]|:\s*)#\d+(?![\w-])/g;

describe('the TypeScript and the documents', () => {
  it('name only files of the repository and headings that exist (docs/, lib/, bench/README.md, …)', async () => {
    const headings = new Map<string, Set<string>>();
    const anchorsOf = async (doc: string) => {
      if (!headings.has(doc)) headings.set(doc, anchors(await readFile(doc, 'utf8')));
      return headings.get(doc)!;
    };
    const broken: string[] = [];
    let seen = 0;
    for (const file of await repositoryFiles(['.ts', '.sql', '.md'])) {
      const folder = dirname(file);
      for (const [i, line] of (await readFile(file, 'utf8')).split('\n').entries()) {
        for (const [target, path, anchor] of [...line.matchAll(CITED_PATH), ...line.matchAll(CITED_DOCUMENT)]) {
          seen++;
          // A .js path names its .ts source, as an import does.
          const candidates = [join(root, path!), join(folder, path!)].flatMap((p) => [p, p.replace(/\.js$/, '.ts')]);
          const found = (await Promise.all(candidates.map(async (p) => ((await exists(p)) ? p : null)))).find((p) => p !== null);
          const where = `${relative(root, file)}:${i + 1} → ${target}`;
          if (!found) broken.push(`${where} (no such file)`);
          else if (anchor !== undefined && found.endsWith('.md') && !(await anchorsOf(found)).has(anchor)) {
            broken.push(`${where} (no such heading)`);
          }
        }
      }
    }
    expect(seen).toBeGreaterThan(100);
    expect(broken).toEqual([]);
  });

  it('cite no issue or pull-request numbers', async () => {
    const cited: string[] = [];
    for (const file of await repositoryFiles(['.ts', '.sql', '.md'])) {
      for (const [i, line] of (await readFile(file, 'utf8')).split('\n').entries()) {
        for (const [number] of line.matchAll(ISSUE)) cited.push(`${relative(root, file)}:${i + 1}: ${number}`);
      }
    }
    expect(cited).toEqual([]);
  });

  it('would catch what these tests are for (a missing file, an outside document, an issue number)', () => {
    const outside = ['STYLE', 'md'].join('.');
    const missing = ['lib/db/nowhere', 'ts'].join('.');
    expect([...`see docs/semantics.md#acks and ${missing}`.matchAll(CITED_PATH)].map((m) => m.slice(1))).toEqual([
      ['docs/semantics.md', 'acks'],
      [missing, undefined],
    ]);
    expect([...`(${outside} "SQL")`.matchAll(CITED_DOCUMENT)].map((m) => m[1])).toEqual([outside]);
    expect(`the dashboard (${'issue'} 11)`.match(ISSUE)).not.toBeNull();
    expect(`fixed in #${12}.`.match(ISSUE)).not.toBeNull();
    expect('[step 3](#3-secrets-then-deploy), color: #333, &#8594;'.match(ISSUE)).toBeNull();
  });
});
