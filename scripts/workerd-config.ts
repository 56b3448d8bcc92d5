// Turns wrangler.jsonc into a workerd config, so the tests and the startup bench serve the bundle
// `wrangler deploy` uploads with the settings it uploads: modules by wrangler's rules, vars and
// secrets as bindings, the compatibility date and flags. Anything else in wrangler.jsonc (a KV
// namespace, a service, a route) is refused, so a new setting cannot go untested.
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import ts from 'typescript';

export interface WranglerConfig {
  name: string;
  main: string;
  build?: { command?: string };
  no_bundle?: boolean;
  find_additional_modules?: boolean;
  rules?: { type: string; globs: string[]; fallthrough?: boolean }[];
  compatibility_date: string;
  compatibility_flags?: string[];
  workers_dev?: boolean;
  vars?: Record<string, string>;
  secrets?: { required?: string[] };
  placement?: Record<string, string>;
  triggers?: { crons?: string[] };
  observability?: { enabled?: boolean };
}

// Settings that change nothing workerd can run locally (where the Worker is placed, logging, the
// build step, the hostname); every other key must be modelled below before it may appear.
const KNOWN = new Set([
  'name',
  'main',
  'build',
  'no_bundle',
  'find_additional_modules',
  'rules',
  'compatibility_date',
  'compatibility_flags',
  'workers_dev',
  'vars',
  'secrets',
  'placement',
  'triggers',
  'observability',
]);

export async function readWranglerConfig(path: string): Promise<WranglerConfig> {
  // TypeScript's tsconfig reader accepts JSON with comments, as wrangler does.
  const parsed = ts.parseConfigFileTextToJson(path, await readFile(path, 'utf8'));
  if (parsed.error) throw new Error(`${path}: ${ts.flattenDiagnosticMessageText(parsed.error.messageText, '\n')}`);
  const config = parsed.config as WranglerConfig;
  const unknown = Object.keys(config).filter((k) => !KNOWN.has(k));
  if (unknown.length) throw new Error(`${path} sets ${unknown.join(', ')}, which scripts/workerd-config.ts does not model yet`);
  return config;
}

type Module = { name: string; kind: 'esModule' | 'wasm' | 'text' | 'data'; path: string };
type Binding = { name: string; text: string } | { name: string; service: string };

export interface WorkerSpec {
  name: string;
  modules: Module[];
  compatibilityDate: string;
  compatibilityFlags?: string[];
  bindings: Binding[];
  /** The network service outbound fetches and sockets go through. */
  globalOutbound?: string;
}

const RULE_KINDS: Record<string, Module['kind']> = { ESModule: 'esModule', CompiledWasm: 'wasm', Text: 'text', Data: 'data' };
// wrangler's built-in rules, applied after the config's own.
const DEFAULT_RULES = [
  { type: 'ESModule', globs: ['**/*.mjs', '**/*.js'] },
  { type: 'CompiledWasm', globs: ['**/*.wasm'] },
  { type: 'Text', globs: ['**/*.txt', '**/*.html', '**/*.sql'] },
  { type: 'Data', globs: ['**/*.bin'] },
];

/** The Worker wrangler would upload, from the bundle directory built for `main`. */
export async function workerFromWrangler(
  config: WranglerConfig,
  bundleDir: string,
  secrets: Record<string, string>,
  extra: Binding[] = [],
): Promise<WorkerSpec> {
  const missing = (config.secrets?.required ?? []).filter((s) => secrets[s] === undefined);
  if (missing.length) throw new Error(`wrangler.jsonc requires the secrets ${missing.join(', ')}`);
  const main: Module = { name: basename(config.main), kind: 'esModule', path: join(bundleDir, basename(config.main)) };
  const modules = [main];
  if (config.find_additional_modules) {
    for (const file of (await readdir(bundleDir, { recursive: true })).sort()) {
      const path = join(bundleDir, file);
      if (path === main.path) continue;
      const rule = [...(config.rules ?? []), ...DEFAULT_RULES].find((r) => r.globs.some((g) => globMatches(g, file)));
      if (!rule || !RULE_KINDS[rule.type]) throw new Error(`no wrangler rule uploads ${file}`);
      modules.push({ name: relative(dirname(main.path), path), kind: RULE_KINDS[rule.type]!, path });
    }
  }
  const text = (vars: Record<string, string>) => Object.entries(vars).map(([name, value]) => ({ name, text: value }));
  return {
    name: config.name,
    modules,
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags,
    bindings: [...text(config.vars ?? {}), ...text(secrets), ...extra],
    globalOutbound: 'internet',
  };
}

// The globs in use are `**/*.ext` or plain names; that is all this needs to understand.
function globMatches(glob: string, file: string): boolean {
  const star = /^\*\*\/\*(\.[\w.]+)$/.exec(glob);
  return star ? file.endsWith(star[1]!) : file === glob;
}

export interface WorkerdConfig {
  /** Where the config file is written: capnp resolves `embed` paths against it. */
  dir: string;
  workers: WorkerSpec[];
  /** One HTTP socket per entry: address `127.0.0.1:port` served by the named Worker. */
  sockets: { service: string; port: number }[];
}

/** workerd's Cap'n Proto text config; `internet` may reach loopback, where the test database lives. */
export function workerdConfigText({ dir, workers, sockets }: WorkerdConfig): string {
  const q = JSON.stringify;
  const worker = (w: WorkerSpec) => {
    const modules = w.modules.map((m) => `(name = ${q(m.name)}, ${m.kind} = embed ${q(relative(dir, m.path))})`);
    const bindings = w.bindings.map((b) =>
      'text' in b ? `(name = ${q(b.name)}, text = ${q(b.text)})` : `(name = ${q(b.name)}, service = ${q(b.service)})`,
    );
    return `(
    modules = [${modules.join(', ')}],
    compatibilityDate = ${q(w.compatibilityDate)},
    compatibilityFlags = [${(w.compatibilityFlags ?? []).map((f) => q(f)).join(', ')}],
    bindings = [${bindings.join(', ')}],${w.globalOutbound ? `\n    globalOutbound = ${q(w.globalOutbound)},` : ''}
  )`;
  };
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    ${workers.map((w) => `(name = ${q(w.name)}, worker = ${worker(w)}),`).join('\n    ')}
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [
    ${sockets.map((s) => `(name = ${q(`${s.service}-${s.port}`)}, address = "127.0.0.1:${s.port}", http = (), service = ${q(s.service)}),`).join('\n    ')}
  ],
);
`;
}
