// Deploys the broker to AWS with sst v4: one Lambda per route family behind one Router URL, the
// Deliver function pushes invoke, one schedule per job of lib/jobs.ts, and a migration step the
// deploy runs before the new code goes live.
//   npx sst secret set DatabaseUrl 'postgres://…' --stage prod && npx sst deploy --stage prod
// Read at deploy time (docs/deploy-aws.md): QUEEN_AWS_REGION, QUEEN_RETENTION_SCHEDULE,
// QUEEN_DELIVERY_SCHEDULE, JWT_JWKS_URL….

// Which paths each route family answers (docs/api.md#routes); the Router sends each prefix to its
// function.
const ROUTES = {
  Push: ['/api/v1/push', '/health'],
  Pop: ['/api/v1/pop'],
  Ack: ['/api/v1/ack', '/api/v1/lease', '/api/v1/transaction'],
  Configure: [
    '/api/v1/configure',
    '/api/v1/resources',
    '/api/v1/consumer-groups',
    '/api/v1/stats',
    // Queen's dashboard and Prometheus (docs/operations.md#queens-dashboard).
    '/api/v1/status',
    '/api/v1/analytics',
    '/api/v1/system',
    '/api/v1/migration',
    '/api/me',
    '/metrics',
    '/streams',
  ],
  Dlq: ['/api/v1/dlq', '/api/v1/messages', '/api/v1/traces'],
  Delivery: ['/api/v1/subscriptions'],
} as const;

// The route families whose requests push (push, pushes inside a transaction, a dead letter's retry
// and redrive): they invoke the Deliver function after a push to a subscribed queue
// (docs/delivery.md#dispatch).
const PUSHING = new Set(['Push', 'Ack', 'Dlq']);

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
    // sst allows no top-level imports here: the job list is loaded when the config runs.
    const { JOBS, jobSchedule } = await import('./lib/jobs.js');
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
      // Off unless the deployer names the origins browsers call from (docs/api.md#cors).
      QUEEN_CORS_ORIGINS: process.env.QUEEN_CORS_ORIGINS ?? '',
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
          const params = args.parametersInCacheKeyAndForwardedToOrigin as {
            headersConfig: { headerBehavior: string; headers?: { items: string[] } };
          };
          const items = params.headersConfig.headers?.items ?? [];
          params.headersConfig = { headerBehavior: 'whitelist', headers: { items: [...items, 'authorization'] } };
          return undefined;
        },
      },
    });
    // Invoked asynchronously (InvocationType Event) by a push; the delivery sweep has a function of its own.
    const deliver = new sst.aws.Function(
      'Deliver',
      { ...shared, handler: 'functions/lambda/deliver.handler', timeout: '60 seconds' },
      { dependsOn: [migration] },
    );

    const functions: Record<string, unknown> = {};
    for (const [name, paths] of Object.entries(ROUTES)) {
      const pushes = PUSHING.has(name);
      const fn = new sst.aws.Function(
        name,
        {
          ...shared,
          handler: `functions/lambda/${name.toLowerCase()}.handler`,
          timeout: name === 'Pop' ? '35 seconds' : '20 seconds',
          url: true,
          ...(pushes && {
            environment: { ...environment, QUEEN_DELIVER_FUNCTION: deliver.name },
            permissions: [{ actions: ['lambda:InvokeFunction'], resources: [deliver.arn] }],
          }),
        },
        { dependsOn: [migration] },
      );
      for (const path of paths) router.route(path, fn.url);
      functions[name] = fn.url;
    }

    // One schedule per job, each with its own function: a run stops starting work near its time limit.
    for (const job of JOBS) {
      new sst.aws.CronV2(
        job.name,
        {
          function: { ...shared, handler: job.handler, timeout: `${job.timeoutSeconds} seconds` },
          ...jobSchedule(job, process.env),
        },
        { dependsOn: [migration] },
      );
    }

    return { url: router.url, ...functions };
  },
});
