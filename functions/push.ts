// Placeholder until the push route family lands.
import { defineFunction } from '../lib/http/context.js';

export default defineFunction('push', () => {});
