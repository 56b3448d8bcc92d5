// sst cannot deploy from here (every command downloads Pulumi first), so the config is checked
// two ways: its run() is evaluated with the sst globals stubbed, recording every resource, and
// the file is type-checked against the platform source embedded in the installed sst binary.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Hono } from 'hono';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import type { BrokerEnv } from '../../lib/http/context.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Recorded {
  kind: string;
  name: string;
  args: any;
  opts: any;
}

const recorded: Recorded[] = [];
const routes: { pattern: string; url: string }[] = [];
const outputs = { url: (name: string) => `https://${name.toLowerCase()}.lambda-url.test.on.aws/` };

function stubGlobals() {
  const record = (kind: string) =>
    class {
      readonly name: string;
      constructor(name: string, args?: any, opts?: any) {
        this.name = name;
        recorded.push({ kind, name, args, opts });
      }
    };
  class Secret extends record('Secret') {
    get value() {
      return `<secret ${this.name}>`;
    }
  }
  class Fn extends record('Function') {
    get url() {
      return outputs.url(this.name);
    }
    get arn() {
      return `arn:aws:lambda:test:000000000000:function:${this.name}`;
    }
  }
  class Router extends record('Router') {
    readonly url = 'https://router.cloudfront.test';
    route(pattern: string, url: string) {
      routes.push({ pattern, url });
    }
  }
  vi.stubGlobal('$config', (input: unknown) => input);
  vi.stubGlobal('$app', { name: 'queen', stage: 'prod' });
  vi.stubGlobal('sst', { Secret, aws: { Function: Fn, Router, CronV2: record('CronV2') } });
  vi.stubGlobal('aws', { lambda: { Invocation: record('Invocation') } });
}

/** Runs the config again with some deploy-time variables set; the first run's records are restored after. */
async function runWithEnv<T>(vars: Record<string, string>, inspect: () => T): Promise<T> {
  const saved = { recorded: recorded.splice(0), routes: routes.splice(0) };
  Object.assign(process.env, vars);
  try {
    await config.run();
    return inspect();
  } finally {
    for (const key of Object.keys(vars)) delete process.env[key];
    recorded.splice(0, recorded.length, ...saved.recorded);
    routes.splice(0, routes.length, ...saved.routes);
  }
}

const find = (kind: string, name?: string) => recorded.filter((r) => r.kind === kind && (name === undefined || r.name === name));
const one = (kind: string, name: string) => {
  const [r] = find(kind, name);
  expect(r, `${kind} ${name}`).toBeDefined();
  return r!;
};

let config: { app(input: { stage: string }): any; run(): Promise<any> };
let result: any;

beforeAll(async () => {
  stubGlobals();
  config = (await import('../../sst.config.js')).default as unknown as typeof config;
  result = await config.run();
});
afterAll(() => vi.unstubAllGlobals());

describe('sst.config.ts run()', () => {
  it('pins sst 4.17.1 on AWS and retains production data', () => {
    expect(config.app({ stage: 'prod' })).toMatchObject({
      name: 'queen',
      home: 'aws',
      version: '4.17.1',
      removal: 'retain',
      protect: true,
    });
    expect(config.app({ stage: 'dev' })).toMatchObject({ removal: 'remove', protect: false });
  });

  it('declares the three secrets, with DATABASE_URL mandatory', () => {
    expect(find('Secret').map((s) => [s.name, s.args])).toEqual([
      ['DatabaseUrl', undefined],
      ['JwtSecret', ''],
      ['QueenEncryptionKey', ''],
    ]);
  });

  it('deploys one arm64 Node 22 function with a URL per route family, auth on, secrets linked', async () => {
    const families = ['Push', 'Pop', 'Ack', 'Configure', 'Dlq', 'Delivery'];
    for (const name of families) {
      const { args, opts } = one('Function', name);
      expect(args).toMatchObject({
        url: true,
        architecture: 'arm64',
        runtime: 'nodejs22.x',
        handler: `functions/lambda/${name.toLowerCase()}.handler`,
      });
      expect(args.link.map((s: { name: string }) => s.name)).toEqual(['DatabaseUrl', 'JwtSecret', 'QueenEncryptionKey']);
      expect(args.environment).toMatchObject({
        QUEEN_AUTH: 'jwt',
        DATABASE_URL: '<secret DatabaseUrl>',
        JWT_SECRET: '<secret JwtSecret>',
        QUEEN_ENCRYPTION_KEY: '<secret QueenEncryptionKey>',
      });
      expect(args.nodejs.install).toContain('@bokuweb/zstd-wasm');
      expect(opts.dependsOn).toEqual([expect.objectContaining({ name: 'MigrateOnDeploy' })]);
      const module = await import(join(root, `functions/lambda/${name.toLowerCase()}.ts`));
      expect(typeof module.handler).toBe('function');
    }
    expect(
      find('Function')
        .map((f) => f.name)
        .sort(),
    ).toEqual([...families, 'Deliver', 'Migrator'].sort());
  });

  it('gives the long-poll function time to answer before CloudFront gives up on it', () => {
    const pop = one('Function', 'Pop').args;
    expect(Number(pop.environment.QUEEN_MAX_WAIT_MS)).toBeLessThan(30_000);
    expect(parseInt(pop.timeout, 10) * 1000).toBeGreaterThan(Number(pop.environment.QUEEN_MAX_WAIT_MS));
  });

  it('serves every route of every family, and /health, from the one Router URL', () => {
    expect(find('Router')).toHaveLength(1);
    expect(result.url).toBe('https://router.cloudfront.test');
    const target = (path: string) =>
      routes.filter((r) => path.startsWith(r.pattern)).sort((a, b) => b.pattern.length - a.pattern.length)[0]?.url;
    expect(target('/health')).toBeDefined();
    for (const fn of allFunctions) {
      const app = new Hono<BrokerEnv>();
      fn.routes(app);
      const family = fn.name.charAt(0).toUpperCase() + fn.name.slice(1);
      for (const route of app.routes) {
        expect(target(route.path), `${route.method} ${route.path}`).toBe(outputs.url(family));
      }
    }
    // The paths of docs/api.md#routes, whether or not their family has landed yet.
    for (const [path, family] of [
      ['/api/v1/push', 'Push'],
      ['/api/v1/pop/queue/q', 'Pop'],
      ['/api/v1/pop', 'Pop'],
      ['/api/v1/ack/batch', 'Ack'],
      ['/api/v1/lease/x/extend', 'Ack'],
      ['/api/v1/transaction', 'Ack'],
      ['/api/v1/configure', 'Configure'],
      ['/api/v1/resources/queues/q', 'Configure'],
      ['/api/v1/consumer-groups/g/queues/q/seek', 'Configure'],
      ['/api/v1/dlq', 'Dlq'],
      ['/api/v1/messages/1/tx/retry', 'Dlq'],
      ['/api/v1/messages', 'Dlq'],
      ['/api/v1/traces', 'Dlq'],
      ['/api/v1/traces/by-name/n', 'Dlq'],
      ['/api/v1/stats/refresh', 'Configure'],
      ['/api/v1/consumer-groups/g/queues/q/partitions/p/seek', 'Configure'],
      ['/api/v1/resources/overview', 'Configure'],
      ['/api/v1/status/queues/q', 'Configure'],
      ['/api/v1/analytics/queue-ops', 'Configure'],
      ['/api/v1/system/maintenance/pop', 'Configure'],
      ['/api/v1/migration/status', 'Configure'],
      ['/api/me', 'Configure'],
      ['/metrics', 'Configure'],
      ['/metrics/prometheus', 'Configure'],
      ['/streams/v1/queries', 'Configure'],
    ] as const) {
      expect(target(path), path).toBe(outputs.url(family));
    }
  });

  it('forwards the Authorization header of GET requests through the Router', () => {
    const { transform } = one('Router', 'Api').args;
    // The two cache policies the sst 4.17.1 Router creates: no headers, and a header whitelist.
    for (const headersConfig of [{ headerBehavior: 'none' }, { headerBehavior: 'whitelist', headers: { items: ['x-forwarded-host'] } }]) {
      const policy = { parametersInCacheKeyAndForwardedToOrigin: { headersConfig, queryStringsConfig: { queryStringBehavior: 'all' } } };
      transform.cachePolicy(policy, {}, 'ApiCachePolicy');
      const headers = policy.parametersInCacheKeyAndForwardedToOrigin.headersConfig as {
        headerBehavior: string;
        headers: { items: string[] };
      };
      expect(headers.headerBehavior).toBe('whitelist');
      expect(headers.headers.items).toContain('authorization');
      expect(policy.parametersInCacheKeyAndForwardedToOrigin.queryStringsConfig).toEqual({ queryStringBehavior: 'all' });
    }
  });

  it('runs retention hourly by default, so an idle Neon compute can still scale to zero', () => {
    const cron = one('CronV2', 'Retention');
    expect(cron.args).toMatchObject({ schedule: 'rate(1 hour)', enabled: true });
    expect(cron.args.function).toMatchObject({
      handler: 'functions/lambda/retention.handler',
      architecture: 'arm64',
      environment: { DATABASE_URL: '<secret DatabaseUrl>' },
    });
    expect(existsSync(join(root, 'functions/lambda/retention.ts'))).toBe(true);
  });

  it('sweeps delivery every minute by default, within a function time limit shorter than that', () => {
    const cron = one('CronV2', 'DeliverySweep');
    expect(cron.args).toMatchObject({ schedule: 'rate(1 minute)', enabled: true });
    expect(cron.args.function).toMatchObject({
      handler: 'functions/lambda/deliver.handler',
      timeout: '60 seconds',
      environment: { DATABASE_URL: '<secret DatabaseUrl>' },
    });
    expect(cron.opts.dependsOn).toEqual([expect.objectContaining({ name: 'MigrateOnDeploy' })]);
    expect(find('CronV2').map((c) => c.name)).toEqual(['Retention', 'DeliverySweep']);
  });

  it('gives the functions that push (push, ack, dlq) the Deliver function to invoke after a push, and the permission to, and no other function either', async () => {
    const deliver = one('Function', 'Deliver');
    expect(deliver.args).toMatchObject({
      handler: 'functions/lambda/deliver.handler',
      architecture: 'arm64',
      environment: { DATABASE_URL: '<secret DatabaseUrl>' },
    });
    expect(deliver.args.url).toBeUndefined();
    expect(deliver.opts.dependsOn).toEqual([expect.objectContaining({ name: 'MigrateOnDeploy' })]);
    expect(typeof (await import(join(root, 'functions/lambda/deliver.ts'))).handler).toBe('function');
    const arn = 'arn:aws:lambda:test:000000000000:function:Deliver';
    for (const name of ['Push', 'Ack', 'Dlq']) {
      const { args } = one('Function', name);
      expect(args.environment).toMatchObject({
        QUEEN_DELIVER_FUNCTION: 'Deliver',
        QUEEN_AUTH: 'jwt',
        DATABASE_URL: '<secret DatabaseUrl>',
      });
      expect(args.permissions).toEqual([{ actions: ['lambda:InvokeFunction'], resources: [arn] }]);
    }
    for (const name of ['Pop', 'Configure', 'Delivery', 'Deliver', 'Migrator']) {
      const { args } = one('Function', name);
      expect(args.environment.QUEEN_DELIVER_FUNCTION, name).toBeUndefined();
      expect(args.permissions, name).toBeUndefined();
    }
  });

  it.each([
    ['rate(5 minutes)', { schedule: 'rate(5 minutes)', enabled: true }],
    ['off', { enabled: false }],
  ])('takes the delivery sweep schedule %s from QUEEN_DELIVERY_SCHEDULE at deploy time', async (value, expected) => {
    const cron = await runWithEnv({ QUEEN_DELIVERY_SCHEDULE: value }, () => one('CronV2', 'DeliverySweep'));
    expect(cron.args).toMatchObject(expected);
  });

  it.each([
    ['rate(15 minutes)', { schedule: 'rate(15 minutes)', enabled: true }],
    ['cron(0 3 * * ? *)', { schedule: 'cron(0 3 * * ? *)', enabled: true }],
    ['off', { enabled: false }],
  ])('takes the retention schedule %s from QUEEN_RETENTION_SCHEDULE at deploy time', async (value, expected) => {
    const cron = await runWithEnv({ QUEEN_RETENTION_SCHEDULE: value }, () => one('CronV2', 'Retention'));
    expect(cron.args).toMatchObject(expected);
  });

  it('refuses to deploy a retention schedule EventBridge would not accept, naming the variable', async () => {
    await expect(runWithEnv({ QUEEN_RETENTION_SCHEDULE: 'every hour' }, () => undefined)).rejects.toThrow(
      /QUEEN_RETENTION_SCHEDULE must be rate\(…\), cron\(…\) or off.*"every hour"/,
    );
  });

  it('pins the AWS region from QUEEN_AWS_REGION, and leaves the profile region alone without it', async () => {
    expect(config.app({ stage: 'prod' }).providers).toBeUndefined();
    process.env.QUEEN_AWS_REGION = 'eu-central-1';
    try {
      expect(config.app({ stage: 'prod' }).providers).toEqual({ aws: { region: 'eu-central-1' } });
    } finally {
      delete process.env.QUEEN_AWS_REGION;
    }
  });

  it('migrates on every deploy through a Lambda invoked by the deploy, with the migrations shipped', () => {
    const migrator = one('Function', 'Migrator').args;
    expect(migrator).toMatchObject({ handler: 'functions/lambda/migrate.handler', copyFiles: [{ from: 'drizzle', to: 'drizzle' }] });
    expect(migrator.url).toBeUndefined();
    const invocation = one('Invocation', 'MigrateOnDeploy').args;
    expect(invocation.functionName).toBe(`Migrator`);
    expect(JSON.parse(invocation.input)).toHaveProperty('deployedAt');
  });
});

describe('sst.config.ts types', () => {
  it('type-checks against the sst 4.17.1 platform source, which rejects a wrong argument', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'queen-sst-'));
    try {
      const diagnostics = await typecheckWithPlatform(dir);
      expect(diagnostics.filter((d) => d.file === 'sst.config.ts')).toEqual([]);
      expect(diagnostics.some((d) => d.file === 'broken.config.ts' && /arm65/.test(d.message))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});

// `sst install` writes .sst/platform (the component source) before it fails to download Pulumi;
// Pulumi's own types are absent, so a small stub gives Input<T> and Output<T> their real shape.
async function typecheckWithPlatform(dir: string) {
  await writeFile(join(dir, 'package.json'), '{"name":"queen-sst-check","type":"module"}');
  await writeFile(join(dir, 'sst.config.ts'), 'export default $config({ app() { return { name: "x", home: "aws" }; }, async run() {} });');
  const sst = join(root, 'node_modules/.bin/sst');
  await promisify(execFile)(sst, ['install', '--stage', 'typecheck'], {
    cwd: dir,
    env: { ...process.env, SST_SKIP_DEPENDENCY_CHECK: '1', SST_TELEMETRY_DISABLED: '1' },
  }).catch(() => {});
  expect((await readFile(join(dir, '.sst/platform/version'), 'utf8')).trim()).toBe('4.17.1');
  await writeFile(join(dir, '.sst/platform/config.d.ts'), PLATFORM_CONFIG);
  await mkdir(join(dir, 'stubs'));
  await writeFile(join(dir, 'stubs/pulumi.d.ts'), PULUMI_STUB);
  const source = `/// <reference path="./.sst/platform/config.d.ts" />\n${await readFile(join(root, 'sst.config.ts'), 'utf8')}`;
  // The job list sst.config.ts loads, beside it as in the repository.
  await mkdir(join(dir, 'lib'));
  await writeFile(join(dir, 'lib/jobs.ts'), await readFile(join(root, 'lib/jobs.ts'), 'utf8'));
  await writeFile(join(dir, 'sst.config.ts'), source);
  await writeFile(join(dir, 'broken.config.ts'), source.replace("'arm64' as const", "'arm65' as const"));
  const program = ts.createProgram([join(dir, 'sst.config.ts'), join(dir, 'broken.config.ts')], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
    typeRoots: [join(root, 'node_modules/@types')],
    paths: { '@pulumi/pulumi': [join(dir, 'stubs/pulumi.d.ts')] },
  });
  return ts
    .getPreEmitDiagnostics(program)
    .flatMap((d) =>
      d.file && !d.file.fileName.includes('/.sst/')
        ? [{ file: d.file.fileName.slice(dir.length + 1), message: ts.flattenDiagnosticMessageText(d.messageText, '\n') }]
        : [],
    );
}

const PLATFORM_CONFIG = `import "./src/global.d.ts";
import { AppInput, App, Config } from "./src/config";
import * as _aws from "@pulumi/aws";
declare global {
  // @ts-expect-error
  export import aws = _aws;
  export const $config: (input: Omit<Config, "app"> & { app(input: AppInput): App }) => Config;
}
`;

const PULUMI_STUB = `export interface Output<T> { apply<U>(fn: (v: T) => U): Output<U>; }
export type Input<T> = T | Promise<T> | Output<T>;
export type UnwrappedObject<T> = T;
export interface ComponentResourceOptions { dependsOn?: any; parent?: any; provider?: any; [k: string]: any }
export interface CustomResourceOptions extends ComponentResourceOptions {}
export declare class Resource {}
export declare const all: any, asset: any, dynamic: any, interpolate: any, jsonStringify: any, output: any, rootStackResource: any, runtime: any, secret: any;
`;
