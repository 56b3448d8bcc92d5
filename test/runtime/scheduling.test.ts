// The pieces of the runtimes that need no database: the local retention timer and the URL the
// deploy's migration step uses.
import { describe, expect, it } from 'vitest';
import { directUrl } from '../../lib/http/runtime/database.js';
import { startRetentionLoop } from '../../lib/http/runtime/retention-loop.js';

describe('the local retention loop', () => {
  it('never starts a run while the previous one is still going, and stop() waits for it', async () => {
    let running = 0;
    let overlapped = false;
    let runs = 0;
    const loop = startRetentionLoop(
      async () => {
        overlapped ||= running > 0;
        running++;
        await new Promise((r) => setTimeout(r, 30));
        running--;
        runs++;
      },
      1,
      () => {},
    );
    while (runs < 4) await new Promise((r) => setTimeout(r, 5));
    await loop.stop();
    expect(running).toBe(0);
    expect(overlapped).toBe(false);
    const after = runs;
    await new Promise((r) => setTimeout(r, 50));
    expect(runs).toBe(after);
  });

  it('logs a failed run and keeps the schedule going', async () => {
    const logged: string[] = [];
    let calls = 0;
    const loop = startRetentionLoop(
      async () => {
        calls++;
        if (calls === 1) throw new Error('database restarting');
      },
      1,
      (m) => logged.push(m),
    );
    while (calls < 3) await new Promise((r) => setTimeout(r, 5));
    await loop.stop();
    expect(logged).toEqual(['retention failed']);
  });
});

describe('directUrl', () => {
  it("turns Neon's pooled host into the direct endpoint the migrations need, keeping everything else", () => {
    expect(directUrl('postgres://u:p@ep-cool-darkness-123456-pooler.us-east-2.aws.neon.tech/neondb?sslmode=require')).toBe(
      'postgres://u:p@ep-cool-darkness-123456.us-east-2.aws.neon.tech/neondb?sslmode=require',
    );
    expect(directUrl('postgres://postgres@127.0.0.1:5432/queen')).toBe('postgres://postgres@127.0.0.1:5432/queen');
  });
});
