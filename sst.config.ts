// Deploys the broker to AWS with sst v4: one Lambda per route family behind one Router URL, the
// retention schedule, and a migration step the deploy runs before the new code goes live.
//   npx sst secret set DatabaseUrl 'postgres://…' --stage prod && npx sst deploy --stage prod
// Read at deploy time (docs/deploy-aws.md): QUEEN_AWS_REGION, QUEEN_RETENTION_SCHEDULE, JWT_JWKS_URL….

// Which paths each route family answers (docs/api.md#routes); the Router sends each prefix to its
// function.
const ROUTES = {
  Push: ['/api/v1/push', '/health'],
  Pop: ['/api/v1/pop'],
  Ack: ['/api/v1/ack', '/api/v1/lease', '/api/v1/transaction'],
  Configure: [
    '/api/v1/configure', '/api/v1/resources', '/api/v1/consumer-groups', '/api/v1/stats',
    // Queen's dashboard and Prometheus (issue 11).
    '/api/v1/status', '/api/v1/analytics', '/api/v1/system', '/api/v1/migration', '/api/me', '/metrics', '/streams',
  ],
  Dlq: ['/api/v1/dlq', '/api/v1/messages', '/api/v1/traces'],
  Delivery: ['/api/v1/subscriptions'],
} as const;

// Each run wakes a suspended Neon compute for its 5-minute scale-to-zero window: every minute would
// keep it running (and billed) around the clock, hourly costs at most 5 minutes an hour.
const DEFAULT_RETENTION_SCHEDULE = 'rate(1 hour)';

/** QUEEN_RETENTION_SCHEDULE: an EventBridge Scheduler rate()/cron() expression, or "off". */
function retentionSchedule(raw = process.env.QUEEN_RETENTION_SCHEDULE) {
  const value = raw?.trim() || DEFAULT_RETENTION_SCHEDULE;
  if (value === 'off') return { schedule: DEFAULT_RETENTION_SCHEDULE, enabled: false } as const;
  if (!/^(rate|cron)\(.+\)$/.test(value)) {
    throw new Error(`QUEEN_RETENTION_SCHEDULE must be rate(…), cron(…) or off, e.g. "rate(6 hours)"; got "${value}"`);
  }
  return { schedule: value as `rate(${string})` | `cron(${string})`, enabled: true } as const;
}

export default $config({
  app(input) {
    return {
      name: 'queen',
      home: 'aws',
      version: '4.17.1',
      removal: input?.stage === 'prod' ? 'retain' : 'remove',
      protect: input?.stage === 'prod',
      // Functions beside the Neon database; sst keeps the secrets in this region too, so set it for
      // every sst command (a .env file next to this one does). Unset: the AWS profile's region.
      ...(process.env.QUEEN_AWS_REGION ? { providers: { aws: { region: process.env.QUEEN_AWS_REGION } } } : {}),
    };
  },
  async run() {
    const databaseUrl = new sst.Secret('DatabaseUrl');
    const jwtSecret = new sst.Secret('JwtSecret', '');
    const encryptionKey = new sst.Secret('QueenEncryptionKey', '');
    const link = [databaseUrl, jwtSecret, encryptionKey];

    // Our code reads the names of docs/api.md#environment-variables on every runtime, so the
    // secrets are also passed under them.
    const environment = {
      DATABASE_URL: databaseUrl.value,
      JWT_SECRET: jwtSecret.value,
      QUEEN_ENCRYPTION_KEY: encryptionKey.value,
      QUEEN_AUTH: 'jwt',
      JWT_JWKS_URL: process.env.JWT_JWKS_URL ?? '',
      JWT_ISSUER: process.env.JWT_ISSUER ?? '',
      JWT_AUDIENCE: process.env.JWT_AUDIENCE ?? '',
      JWT_TENANT_CLAIM: process.env.JWT_TENANT_CLAIM ?? '',
      // CloudFront (the Router) gives an origin 30 s: a long-poll must answer before that.
      QUEEN_MAX_WAIT_MS: '25000',
    };
    const shared = {
      runtime: 'nodejs22.x' as const,
      architecture: 'arm64' as const,
      memory: '256 MB' as const,
      link,
      environment,
      // zstd-wasm reads zstd.wasm beside its own file: ship the package rather than bundle it.
      nodejs: { install: ['@bokuweb/zstd-wasm'] },
    };

    const migrator = new sst.aws.Function('Migrator', {
      ...shared,
      handler: 'functions/lambda/migrate.handler',
      timeout: '5 minutes',
      copyFiles: [{ from: 'drizzle', to: 'drizzle' }],
    });
    // Runs on every deploy (migrations are idempotent) and before any function is updated, so new
    // code never meets an old schema; a failed migration fails the deploy.
    const migration = new aws.lambda.Invocation('MigrateOnDeploy', {
      functionName: migrator.name,
      input: JSON.stringify({ deployedAt: Date.now() }),
    });

    const router = new sst.aws.Router('Api', {
      transform: {
        // CloudFront drops Authorization from GET requests (pop, listings) unless the header is part
        // of the cache key. Every API response is Cache-Control: no-store, so nothing is cached.
        cachePolicy: (args: { parametersInCacheKeyAndForwardedToOrigin: unknown }) => {
          const params = args.parametersInCacheKeyAndForwardedToOrigin as { headersConfig: { headerBehavior: string; headers?: { items: string[] } } };
          const items = params.headersConfig.headers?.items ?? [];
          params.headersConfig = { headerBehavior: 'whitelist', headers: { items: [...items, 'authorization'] } };
          return undefined;
        },
      },
    });
    const functions: Record<string, unknown> = {};
    for (const [name, paths] of Object.entries(ROUTES)) {
      const fn = new sst.aws.Function(
        name,
        {
          ...shared,
          handler: `functions/lambda/${name.toLowerCase()}.handler`,
          timeout: name === 'Pop' ? '35 seconds' : '20 seconds',
          url: true,
        },
        { dependsOn: [migration] },
      );
      for (const path of paths) router.route(path, fn.url);
      functions[name] = fn.url;
    }

    // A run deletes in statements of 10,000 segments: the time limit covers a long backlog, and a
    // run cut short leaves nothing half-done (the next run carries on).
    new sst.aws.CronV2(
      'Retention',
      {
        function: { ...shared, handler: 'functions/lambda/retention.handler', timeout: '5 minutes' },
        ...retentionSchedule(),
      },
      { dependsOn: [migration] },
    );

    return { url: router.url, ...functions };
  },
});
