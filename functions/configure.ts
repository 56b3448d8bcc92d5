// Placeholder until the configure route family lands.
import { defineFunction } from '../lib/http/context.js';

export default defineFunction('configure', () => {});
