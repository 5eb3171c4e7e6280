// A minimal client of a child process's V8 inspector (node --inspect=127.0.0.1:0): the sessions
// scenario uses it to force a full garbage collection in the service before reading its memory.
import WebSocket from 'ws';

export interface Inspector {
  call<T = any>(method: string, params?: Record<string, unknown>): Promise<T>;
  /** Calls `handler` with the params of every notification of `method` (HeapProfiler.addHeapSnapshotChunk, say). */
  on(method: string, handler: (params: any) => void): void;
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
  const handlers = new Map<string, (params: any) => void>();
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as {
      id?: number;
      method?: string;
      params?: unknown;
      result?: unknown;
      error?: { message: string };
    };
    if (message.method) handlers.get(message.method)?.(message.params);
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
    on: (method, handler) => void handlers.set(method, handler),
    close: () => ws.close(),
  };
}
