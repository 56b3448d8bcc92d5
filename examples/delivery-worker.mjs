// A Cloudflare Worker that receives a subscription's push deliveries: the signature is checked
// (401 otherwise), the handler's outcome is the answer (200, or 500 when it throws, so the batch is
// retried). Set the subscription's secret with `wrangler secret put QUEEN_DELIVERY_SECRET`.
import { deliveryHandler } from 'queen-serverless-client';

export default {
  fetch: deliveryHandler(
    (env) => env.QUEEN_DELIVERY_SECRET,
    async (delivery) => {
      const failed = [];
      for (const message of delivery.messages) {
        // delivery.webhookId is the same on every retry of this batch: deduplicate on it if needed.
        if (typeof message.data?.email !== 'string') failed.push({ offset: message.offset, status: 'dlq', error: 'no email address' });
      }
      return { acks: failed }; // the messages not named are completed
    },
  ),
};
