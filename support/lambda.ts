// Lambda function-URL events as AWS sends them, their results, and tokens the deployed app accepts:
// for the runtime tests and the cold-start benchmark alike.
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';

export const JWT_SECRET = 'queen-runtime-test-secret-0123456789';

export function token(claims: { role: string; tenant?: string; sub?: string }, secret = JWT_SECRET): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(secret));
}

export interface EventOptions {
  body?: unknown;
  /** Send the body base64-encoded, as a function URL does for non-text content types. */
  base64?: boolean;
  headers?: Record<string, string>;
}

/** A Lambda function-URL request (payload format 2.0), shaped like the ones AWS delivers. */
export function functionUrlEvent(method: string, pathAndQuery: string, options: EventOptions = {}) {
  const [rawPath = '/', rawQueryString = ''] = pathAndQuery.split('?');
  const domain = 'abcdefghij.lambda-url.eu-west-1.on.aws';
  const text = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const headers: Record<string, string> = {
    host: domain,
    'user-agent': 'curl/8.5.0',
    accept: '*/*',
    'x-amzn-trace-id': `Root=1-${randomUUID().slice(0, 8)}-${randomUUID().replace(/-/g, '').slice(0, 24)}`,
    'x-forwarded-for': '203.0.113.7',
    'x-forwarded-proto': 'https',
    'x-forwarded-port': '443',
    ...(text !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) } : {}),
    ...options.headers,
  };
  const query = Object.fromEntries(new URLSearchParams(rawQueryString));
  const now = new Date();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers,
    ...(rawQueryString ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abcdefghij',
      domainName: domain,
      domainPrefix: 'abcdefghij',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'curl/8.5.0' },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(text !== undefined
      ? { body: options.base64 ? Buffer.from(text).toString('base64') : text, isBase64Encoded: !!options.base64 }
      : { isBase64Encoded: false }),
  };
}

export interface LambdaResult {
  statusCode: number;
  headers?: Record<string, string>;
  body: string;
  isBase64Encoded: boolean;
}

export function parseResult(result: LambdaResult): { status: number; body: any } {
  const text = result.isBase64Encoded ? Buffer.from(result.body, 'base64').toString('utf8') : result.body;
  return { status: result.statusCode, body: text ? JSON.parse(text) : null };
}
