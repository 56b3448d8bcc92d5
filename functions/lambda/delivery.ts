// AWS Lambda entry for the delivery route family, the subscription routes (function URL, payload 2.0).
import { createLambdaHandler } from '../../lib/http/runtime/lambda.js';
import delivery from '../delivery.js';

export const handler = createLambdaHandler([delivery]);
