// AWS Lambda entry for the configure route family (function URL, payload 2.0).
import { createLambdaHandler } from '../../lib/http/runtime/lambda.js';
import configure from '../configure.js';

export const handler = createLambdaHandler([configure]);
