// A minimal client of a child process's V8 inspector (node --inspect=127.0.0.1:0): the sessions
// scenario uses it to force a full garbage collection in the service before reading its memory.
import WebSocket from 'ws';

export interface Inspector {
  call<T = any>(method: string, params?: Record<string, unknown>): Promise<T>;
  close(): void;
}

export async function connectInspector(url: string): Promise<Inspector> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let next = 0;
  const pending = new Map<number, { resolve(v: any): void; reject(e: Error): void }>();
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as { id?: number; result?: unknown; error?: { message: string } };
    const waiter = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id!);
    if (message.error) waiter.reject(new Error(message.error.message));
    else waiter.resolve(message.result);
  });
  return {
    call: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const id = ++next;
        pending.set(id, { resolve, reject });
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}
