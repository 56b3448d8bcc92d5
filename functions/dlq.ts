// Placeholder until the dlq route family lands.
import { defineFunction } from '../lib/http/context.js';

export default defineFunction('dlq', () => {});
