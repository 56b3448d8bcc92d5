// The layout is the architecture (docs/architecture.md#the-arrows): functions use http and broker,
// broker uses db and codec, nothing calls up; the command line, the benchmarks and the tests sit on
// top, and what the benchmarks share with the tests lives in support/, never in test/. Read from
// the source text, type-only imports included.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

// What each part of the repository may import inside it (package imports are not arrows).
const LEAVES = ['lib/errors.ts', 'lib/config.ts', 'lib/jobs.ts'];
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
  // Entry points: decode with lib/http, call lib/broker, answer. The deploy entries start zstd
  // (lib/codec) before serving; a scheduled job gets a database (lib/db/types.ts), never a driver.
  'functions/': ['functions/', 'lib/http/', 'lib/broker/', 'lib/codec/', 'lib/db/types.ts', ...LEAVES],
  // The command line migrates and opens databases as npm start does (lib/db, lib/http/runtime) and
  // runs a job as its cron does (functions/); the broker it reaches only through those.
  'cli/': ['cli/', 'lib/db/', 'lib/http/runtime/', 'functions/', ...LEAVES],
  // What the tests and the benchmarks share: an HTTP client, a load with an audit, a private
  // PostgreSQL, a route fuzzer, Lambda events. It reads the log as the broker stores it.
  'support/': ['support/', 'lib/'],
  // Benchmarks measure any layer on its own, and the bundles scripts/ builds; never test/.
  'bench/': ['bench/', 'support/', 'lib/', 'functions/', 'scripts/', 'client/'],
  // Tests reach everything they test, and no benchmark.
  'test/': ['test/', 'support/', 'lib/', 'functions/', 'cli/', 'scripts/', 'client/', 'drizzle/', 'sst.config.ts'],
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

const graph = new Map(['lib', 'functions', 'cli', 'support', 'bench', 'test'].flatMap(sources).map((f) => [f, importsOf(f)]));

describe('the import arrows of lib/, functions/, cli/, support/, bench/ and test/', () => {
  it('finds the imports it checks (the scan is not vacuous)', () => {
    expect(graph.get('lib/broker/push.ts')).toContain('lib/db/types.ts');
    expect(graph.get('functions/push.ts')).toContain('lib/http/requests/push.ts');
    expect(graph.get('cli/database.ts')).toContain('functions/retention.ts');
    expect(graph.get('bench/faults.ts')).toContain('support/load.ts');
    expect(graph.get('test/http/fuzz.test.ts')).toContain('support/fuzz.ts');
  });

  it('has nothing outside test/ import test/: what a benchmark shares with the tests is in support/', () => {
    const intoTests = [...graph].flatMap(([file, deps]) =>
      file.startsWith('test/') ? [] : deps.filter((d) => d.startsWith('test/')).map((d) => `${file} -> ${d}`),
    );
    expect(intoTests).toEqual([]);
  });

  it('has no file in lib/broker that imports lib/http', () => {
    const upward = [...graph].flatMap(([file, deps]) =>
      file.startsWith('lib/broker/') ? deps.filter((d) => d.startsWith('lib/http/')).map((d) => `${file} -> ${d}`) : [],
    );
    expect(upward).toEqual([]);
  });

  it('points every import one way: codec and db at the bottom, nothing in lib/ calls functions/, no test imports a benchmark', () => {
    const wrong: string[] = [];
    for (const [file, deps] of graph) {
      const layer = Object.keys(ALLOWED).find((l) => file === l || file.startsWith(l));
      expect(layer, `${file} belongs to no layer`).toBeDefined();
      for (const d of deps)
        if (!d.startsWith('node_modules/') && !ALLOWED[layer!]!.some((a) => d === a || d.startsWith(a))) wrong.push(`${file} -> ${d}`);
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
