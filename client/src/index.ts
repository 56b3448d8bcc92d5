// queen-serverless-client: the typed JavaScript client (docs/clients.md).
export { Queen, type QueenOptions, type PopOptions, type PushInput, type Ackable } from './queen.js';
export type { ConsumeOptions, Handler } from './consume.js';
export type { Transaction } from './transaction.js';
export type { Admin, DlqAddress } from './admin.js';
export { QueenError, AckError } from './errors.js';
export { verifyDelivery, deliveryHandler, DeliveryVerificationError, type Delivery, type Secrets, type HeaderSource } from './delivery.js';
export { lambdaDeliveryHandler, type FunctionUrlEvent, type FunctionUrlResult } from './lambda.js';
export { uuidv7 } from './uuid.js';
export type * from './wire.js';
