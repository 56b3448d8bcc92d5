// A WebSocket-to-TCP proxy so the Neon driver can reach a plain PostgreSQL, the way Neon's own
// proxy does: ws://host:port/v2?address=db-host:db-port, one TCP connection per socket.
import { createConnection } from 'node:net';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface WsProxy {
  /** `127.0.0.1:PORT`, the value for ConnectOptions.neonWsProxy. */
  address: string;
  close(): Promise<void>;
}

export async function startWsProxy(port = 0): Promise<WsProxy> {
  const server = new WebSocketServer({ host: '127.0.0.1', port });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  server.on('connection', (ws: WebSocket, req) => {
    const target = new URL(req.url ?? '/', 'http://proxy').searchParams.get('address') ?? '';
    const [host, portText] = target.split(':');
    const tcp = createConnection({ host: host || '127.0.0.1', port: Number(portText) || 5432 });
    tcp.setNoDelay(true);
    ws.on('message', (data) => tcp.write(data as Buffer));
    tcp.on('data', (chunk) => ws.send(chunk));
    const end = () => {
      tcp.destroy();
      ws.close();
    };
    ws.on('close', end);
    ws.on('error', end);
    tcp.on('close', end);
    tcp.on('error', end);
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of server.clients) c.terminate();
        server.close(() => resolve());
      }),
  };
}
