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
