import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got, and what it answered. */
export interface ReceivedRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
  answered: number;
}

/**
 * A webhook receiver the test runs on loopback: each path answers from its script of statuses
 * (then 200), and every request is recorded with the status it got.
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly scripts = new Map<string, number[]>();
  private readonly always = new Map<string, number>();
  private server?: Server;
  url = '';

  /** `path` answers `statuses` in order, then 200; returns its URL. */
  script(path: string, statuses: number[]): string {
    this.scripts.set(path, [...statuses]);
    return `${this.url}${path}`;
  }

  /** `path` answers `status` to every request; returns its URL. */
  fail(path: string, status: number): string {
    this.always.set(path, status);
    return `${this.url}${path}`;
  }

  at(path: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const path = request.url ?? '/';
        const answered = this.always.get(path) ?? this.scripts.get(path)?.shift() ?? 200;
        this.requests.push({
          path,
          headers: request.headers as Record<string, string>,
          body,
          answered,
        });
        response.writeHead(answered).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
