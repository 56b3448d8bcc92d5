// An AWS Lambda behind a function URL that receives a subscription's push deliveries (payload
// format 2.0; base64 bodies are decoded). The same answers as deliveryHandler: 401, 200 or 500.
import { lambdaDeliveryHandler } from 'queen-serverless-client';

export const handler = lambdaDeliveryHandler(
  () => process.env.QUEEN_DELIVERY_SECRET.split(','), // both secrets while one is rotated
  async (delivery) => {
    for (const message of delivery.messages) console.log(delivery.queue, message.offset, message.data);
  },
);
