// A local stand-in for an OpenAI-compatible provider (no model can be had on these machines): it
// speaks the Chat Completions API over real HTTP, so the `openai` client library stays in the path.
// Each request is recorded and answered with the next content the test queued.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequest {
  path: string;
  authorization: string | undefined;
  body: {
    model: string;
    messages: Array<{ role: string; content: string }>;
    response_format?: { type: string; json_schema?: { name: string; schema: unknown } };
  };
}

export class OpenAiCompatibleServer {
  readonly requests: ChatRequest[] = [];
  /** The contents to answer, in order; an answer of `null` is a 500. */
  readonly answers: Array<string | null> = [];

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<OpenAiCompatibleServer> {
    const server = http.createServer();
    const fake = new OpenAiCompatibleServer(server);
    server.on('request', (req, res) => fake.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** The base URL a client is given (AI_BASE_URL). */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    this.requests.push({ path: req.url, authorization: req.headers.authorization, body });
    const content = this.answers.shift();
    if (content === null || content === undefined) {
      res
        .writeHead(500, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'no answer queued', type: 'server_error' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `chatcmpl-${this.requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      }),
    );
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
