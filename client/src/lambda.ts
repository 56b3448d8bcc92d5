// Receiving push deliveries on a Lambda function URL (payload format 2.0): the same answers as
// deliveryHandler, as the function URL's result object.
import { answerDelivery, type DeliveryFunction, type Secrets } from './delivery.js';

export interface FunctionUrlEvent {
  headers?: Record<string, string | undefined>;
  body?: string | null;
  isBase64Encoded?: boolean;
  requestContext?: { http?: { method?: string } };
}

export interface FunctionUrlResult {
  statusCode: number;
  headers?: Record<string, string>;
  body?: string;
}

export function lambdaDeliveryHandler<T = unknown>(
  secret: Secrets | (() => Secrets),
  handler: DeliveryFunction<T, [event: FunctionUrlEvent]>,
): (event: FunctionUrlEvent) => Promise<FunctionUrlResult> {
  return async (event) => {
    if (event.requestContext?.http?.method && event.requestContext.http.method !== 'POST')
      return { statusCode: 405, headers: { allow: 'POST' } } as FunctionUrlResult;
    const text = event.body ?? '';
    const body = event.isBase64Encoded ? Uint8Array.from(atob(text), (c) => c.charCodeAt(0)) : text;
    const secrets = typeof secret === 'function' ? secret() : secret;
    const answer = await answerDelivery<T>({ headers: event.headers ?? {}, body }, secrets, (d) => handler(d, event));
    const result: FunctionUrlResult = { statusCode: answer.status };
    if (answer.body) Object.assign(result, { headers: { 'content-type': 'application/json' }, body: answer.body });
    return result;
  };
}
