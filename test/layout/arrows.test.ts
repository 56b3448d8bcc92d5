// The layout is the architecture (docs/architecture.md#the-arrows): functions use http and broker, broker uses db and
// codec, nothing calls up. Read from the source text, type-only imports included.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

// What each part of lib/ may import inside the repository (package imports are not arrows).
const ALLOWED: Record<string, string[]> = {
  'lib/codec/': ['lib/codec/'],
  // lib/errors.ts is a leaf every layer shares (the error type, SQLSTATE names).
  'lib/db/': ['lib/db/', 'drizzle/', 'lib/errors.ts'],
  // client/src/wire.ts: the answer shapes, declared once for the client and the broker (types only).
  'lib/broker/': ['lib/broker/', 'lib/db/', 'lib/codec/', 'lib/errors.ts', 'lib/config.ts', 'client/src/wire.ts'],
  'lib/http/': ['lib/http/', 'lib/broker/', 'lib/db/', 'lib/codec/', 'lib/errors.ts', 'lib/config.ts', 'lib/jobs.ts', 'client/src/wire.ts'],
  'lib/errors.ts': [],
  'lib/config.ts': [],
  // The scheduled jobs and their schedules: a leaf sst.config.ts loads too.
  'lib/jobs.ts': [],
};

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.[^'"]+)['"]/gm;

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every relative import of `file`, as repository paths (`.js` specifiers name the `.ts` source). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(SPECIFIER)].map((m) => relative(ROOT, resolve(ROOT, dirname(file), m[1]!)).replace(/\.js$/, '.ts'));
}

const graph = new Map(sources('lib').map((f) => [f, importsOf(f)]));

describe('the import arrows of lib/', () => {
  it('finds the imports it checks (the scan is not vacuous)', () => {
    expect(graph.get('lib/broker/push.ts')).toContain('lib/db/types.ts');
    expect(graph.get('functions/push.ts')).toBeUndefined();
    expect(importsOf('functions/push.ts')).toContain('lib/http/requests/push.ts');
  });

  it('has no file in lib/broker that imports lib/http', () => {
    const upward = [...graph].flatMap(([file, deps]) =>
      file.startsWith('lib/broker/') ? deps.filter((d) => d.startsWith('lib/http/')).map((d) => `${file} -> ${d}`) : [],
    );
    expect(upward).toEqual([]);
  });

  it('points every import one way: codec and db at the bottom, nothing in lib/ calls functions/', () => {
    const wrong: string[] = [];
    for (const [file, deps] of graph) {
      const layer = Object.keys(ALLOWED).find((l) => file === l || file.startsWith(l));
      expect(layer, `${file} belongs to no layer`).toBeDefined();
      for (const d of deps) if (!d.startsWith('node_modules/') && !ALLOWED[layer!]!.some((a) => d === a || d.startsWith(a))) wrong.push(`${file} -> ${d}`);
    }
    expect(wrong).toEqual([]);
  });

  it('has no import cycle (lib/db/client.ts and the drivers share lib/db/types.ts instead)', () => {
    const cycles: string[] = [];
    const done = new Set<string>();
    const visit = (file: string, path: string[]) => {
      if (path.includes(file)) return void cycles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
      if (done.has(file)) return;
      for (const d of graph.get(file) ?? []) visit(d, [...path, file]);
      done.add(file);
    };
    for (const file of graph.keys()) visit(file, []);
    expect(cycles).toEqual([]);
  });
});
