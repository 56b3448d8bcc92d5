// Starts and stops the V8 profiler of a process started with --inspect=<port>, over the inspector
// protocol, so a profile covers exactly one measured window.
import WebSocket from 'ws';
import type { CpuProfile } from './cpuprofile.js';

export class Inspector {
  private nextId = 1;
  private readonly waiting = new Map<number, (result: unknown) => void>();

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as { id?: number; result?: unknown };
      if (msg.id !== undefined) this.waiting.get(msg.id)?.(msg.result);
    });
  }

  static async connect(port: number): Promise<Inspector> {
    const list = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
    const ws = new WebSocket(list[0]!.webSocketDebuggerUrl);
    await new Promise((ok, fail) => ws.once('open', ok).once('error', fail));
    return new Inspector(ws);
  }

  send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    this.ws.send(JSON.stringify({ id, method, params }));
    return new Promise((ok) => this.waiting.set(id, ok as (r: unknown) => void));
  }

  async startProfile(intervalUs = 250): Promise<void> {
    await this.send('Profiler.enable');
    await this.send('Profiler.setSamplingInterval', { interval: intervalUs });
    await this.send('Profiler.start');
  }

  async stopProfile(): Promise<CpuProfile> {
    return (await this.send<{ profile: CpuProfile }>('Profiler.stop')).profile;
  }

  close(): void {
    this.ws.close();
  }
}
