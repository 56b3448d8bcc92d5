// Placeholder until the pop route family lands.
import { defineFunction } from '../lib/http/context.js';

export default defineFunction('pop', () => {});
