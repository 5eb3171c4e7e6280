// The recorder's OTP connection: a WebSocket to {ws_url}/otp speaking the public protocol
// (docs/protocol.md) as any executor would: hello/welcome, pong for every ping, frames by type.

import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import type { OutboundMessage } from '../../otp/protocol/schemas/messages.js';

/** A frame the service sends, typed by its type (the protocol's catalogue). */
export type Frame = OutboundMessage;

export interface HelloInfo {
  name: string;
  version: string;
  capabilities: Record<string, unknown>;
}

const stem = randomBytes(4).toString('hex');
let counter = 0;
const messageId = () => `msg_rec${stem}${(++counter).toString(36)}`;

export class OtpClient {
  sessionId?: string;
  private readonly listeners = new Set<(frame: Frame) => void>();
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      let frame: Frame;
      try {
        frame = JSON.parse(data.toString());
      } catch {
        return;
      }
      if (frame.type === 'ping') this.send('pong', undefined, { ref: frame.id });
      for (const listener of [...this.listeners]) listener(frame);
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
  }

  /** Opens the socket with the key and completes the handshake. */
  static async connect(url: string, key: string, hello: HelloInfo): Promise<OtpClient> {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const client = new OtpClient(ws);
    const ask = client.send('hello', { executor: 'runner', ...hello });
    const welcome = await client.reply(ask, 'welcome');
    client.sessionId = welcome.payload.sessionId;
    return client;
  }

  on(listener: (frame: Frame) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Sends a frame (sessionId filled in once there is one); answers its id. */
  send(type: string, payload?: unknown, fields: { runId?: string; ref?: string } = {}): string {
    const id = messageId();
    const frame = {
      otp: '1.0',
      id,
      ts: new Date().toISOString(),
      type,
      ...(this.sessionId ? { sessionId: this.sessionId } : {}),
      ...fields,
      ...(payload === undefined ? {} : { payload }),
    };
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
    return id;
  }

  /** The frame of `type` answering `ref`; rejects on an error frame answering it, or when the socket closes. */
  reply<T extends Frame['type']>(ref: string, type: T, timeoutMs = 15_000): Promise<Extract<Frame, { type: T }>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`no ${type} answered ${ref} within ${timeoutMs} ms`)), timeoutMs);
      const off = this.on((frame) => {
        if (!('ref' in frame) || frame.ref !== ref) return;
        if (frame.type === type) done(undefined, frame as Extract<Frame, { type: T }>);
        else if (frame.type === 'error') done(new Error(`${frame.payload.code}: ${frame.payload.message}`));
      });
      const closing = this.closed.then(({ code, reason }) =>
        done(new Error(`connection closed (${code} ${reason}) before ${type}`)),
      );
      void closing;
      const done = (err?: Error, frame?: Extract<Frame, { type: T }>) => {
        clearTimeout(timer);
        off();
        if (err) reject(err);
        else resolve(frame!);
      };
    });
  }

  close(): void {
    this.ws.close(1000, 'recorder done');
  }
}
