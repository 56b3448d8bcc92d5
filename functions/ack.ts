// Placeholder until the ack route family lands.
import { defineFunction } from '../lib/http/context.js';

export default defineFunction('ack', () => {});
