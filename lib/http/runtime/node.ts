// The local server: one Node HTTP server for every function, with a graceful close.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import type { BrokerEnv } from '../context.js';

export interface NodeServer {
  url: string;
  /** Stops accepting, lets in-flight requests finish (up to graceMs), then drops what is left. */
  close(graceMs?: number): Promise<void>;
}

export function serveNode(app: Hono<BrokerEnv>, port: number, hostname = '0.0.0.0'): Promise<NodeServer> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname }, (info: AddressInfo) => {
      const host = ['0.0.0.0', '::', '127.0.0.1', '::1'].includes(hostname) ? 'localhost' : hostname;
      resolve({ url: `http://${host}:${info.port}`, close: (graceMs) => closeGracefully(server as Server, graceMs) });
    }) as Server;
    server.once('error', reject);
  });
}

function closeGracefully(server: Server, graceMs = 35_000): Promise<void> {
  return new Promise((resolve) => {
    // A long-poll pop may run up to its timeout (30 s by default); past the grace period we cut.
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

// npm forwards every SIGINT/SIGTERM it receives to the server, so a signal sent to the whole
// process group (Ctrl-C in a terminal) arrives twice: a repeat this soon is the same request.
const REPEAT_MS = 2_000;

/**
 * Calls stop once on SIGTERM or SIGINT; a second signal later than REPEAT_MS exits at once. Under
 * an npm script the server also stops when npm is gone (npm killed with -9 would otherwise leave
 * it serving with nobody to stop it).
 */
export function onStopSignals(stop: (reason: string) => Promise<void>, log: (message: string) => void): void {
  let firstAt: number | undefined;
  const begin = (reason: string) => {
    if (firstAt === undefined) {
      firstAt = Date.now();
      stop(reason).then(
        () => process.exit(0),
        (err: unknown) => {
          console.error('stopping failed', err);
          process.exit(1);
        },
      );
    } else if (Date.now() - firstAt > REPEAT_MS) {
      log(`${reason} again: exiting now`);
      process.exit(1);
    }
  };
  process.on('SIGINT', () => begin('SIGINT'));
  process.on('SIGTERM', () => begin('SIGTERM'));
  if (process.env.npm_lifecycle_event) {
    const parent = process.ppid;
    const watch = setInterval(() => {
      if (process.ppid === parent) return;
      clearInterval(watch);
      begin('npm exited');
    }, 500);
    watch.unref();
  }
}
