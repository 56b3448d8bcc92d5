#!/usr/bin/env node
// `npx queen-serverless <command>`: runs the TypeScript CLI through tsx (a dependency), so it works
// from any folder without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
