// The globals sst v4 gives sst.config.ts, reduced to what our config uses, so `tsc --noEmit`
// checks it without `.sst/platform` (which `sst install` writes only after downloading Pulumi).
// Property names and literal types are copied from the platform source of sst 4.17.1;
// test/runtime/sst-config.test.ts also checks the config against that source itself.
type SstInput<T> = T | SstOutput<T> | Promise<T>;

interface SstOutput<T> {
  apply<U>(fn: (value: T) => U): SstOutput<U>;
}

interface SstFunctionArgs {
  handler: string;
  runtime?: SstInput<'nodejs18.x' | 'nodejs20.x' | 'nodejs22.x' | 'nodejs24.x'>;
  architecture?: SstInput<'x86_64' | 'arm64'>;
  memory?: SstInput<`${number} MB` | `${number} GB`>;
  timeout?: SstInput<`${number} ${'second' | 'seconds' | 'minute' | 'minutes'}`>;
  url?: SstInput<boolean | { authorization?: 'none' | 'iam'; cors?: boolean }>;
  link?: SstInput<unknown[]>;
  environment?: SstInput<Record<string, SstInput<string>>>;
  copyFiles?: SstInput<{ from: SstInput<string>; to?: SstInput<string> }[]>;
  nodejs?: SstInput<{
    install?: SstInput<string[] | Record<string, string>>;
    banner?: SstInput<string>;
    format?: SstInput<'cjs' | 'esm'>;
    minify?: SstInput<boolean>;
  }>;
}

interface SstComponentOptions {
  dependsOn?: unknown[];
}

interface SstAppInput {
  stage: string;
}

interface SstApp {
  name: string;
  home: 'aws' | 'cloudflare' | 'local';
  version?: string;
  removal?: 'remove' | 'retain' | 'retain-all';
  protect?: boolean;
  providers?: Record<string, unknown>;
}

interface SstConfig {
  app(input: SstAppInput): SstApp;
  run(): Promise<Record<string, unknown> | void>;
}

declare function $config(input: SstConfig): SstConfig;
declare const $app: Readonly<{ name: string; stage: string }>;

declare namespace sst {
  class Secret {
    constructor(name: string, placeholder?: SstInput<string>);
    readonly name: string;
    readonly value: SstOutput<string>;
  }
  namespace aws {
    class Function {
      constructor(name: string, args: SstFunctionArgs, opts?: SstComponentOptions);
      readonly name: SstOutput<string>;
      readonly url: SstOutput<string>;
      readonly arn: SstOutput<string>;
    }
    class Router {
      constructor(
        name: string,
        args?: {
          domain?: SstInput<string>;
          transform?: {
            cachePolicy?: (args: { parametersInCacheKeyAndForwardedToOrigin: unknown }, opts: unknown, name: string) => undefined;
          };
        },
        opts?: SstComponentOptions,
      );
      readonly url: SstOutput<string>;
      route(pattern: SstInput<string>, url: SstInput<string>, args?: { rewrite?: { regex: string; to: string } }): void;
    }
    class CronV2 {
      constructor(
        name: string,
        args: {
          function: SstInput<string | SstFunctionArgs>;
          schedule: SstInput<`rate(${string})` | `cron(${string})` | `at(${string})`>;
          enabled?: SstInput<boolean>;
          event?: unknown;
        },
        opts?: SstComponentOptions,
      );
    }
  }
}

declare namespace aws {
  namespace lambda {
    class Invocation {
      constructor(
        name: string,
        args: { functionName: SstInput<string>; input: SstInput<string>; triggers?: Record<string, unknown> },
        opts?: SstComponentOptions,
      );
      readonly result: SstOutput<string>;
    }
  }
}
