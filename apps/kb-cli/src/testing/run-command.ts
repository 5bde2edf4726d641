import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { Command } from 'commander';

/** What a stub API saw of one request. */
export interface SeenRequest {
  method: string;
  url: string;
  authorization: string | undefined;
  body: unknown;
}

/** A node:http server answering every request with `answer(request)`; it records what it saw. */
export async function stubApi(
  /** `body` is sent as JSON, `text` as plain text (a Prometheus exposition). */
  answer: (request: SeenRequest) => { status: number; body?: unknown; text?: string },
): Promise<{ url: string; seen: SeenRequest[]; close: () => Promise<void> }> {
  const seen: SeenRequest[] = [];
  const read = async (request: IncomingMessage): Promise<unknown> => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    return text ? JSON.parse(text) : undefined;
  };
  const server: Server = createServer((request, response) => {
    void read(request).then((body) => {
      const entry: SeenRequest = {
        method: request.method!,
        url: request.url!,
        authorization: request.headers.authorization,
        body,
      };
      seen.push(entry);
      const { status, body: reply, text } = answer(entry);
      if (text !== undefined) {
        response.writeHead(status, { 'content-type': 'text/plain' });
        response.end(text);
        return;
      }
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Runs `kb <args>` with only `register`'s command, and returns what it printed on stdout. */
export async function runCommand(
  register: (program: Command) => void,
  args: string[],
): Promise<{ stdout: string; exitCode: number | undefined }> {
  const program = new Command('kb').exitOverride();
  register(program);
  let stdout = '';
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const exitCodeBefore = process.exitCode;
  process.exitCode = undefined;
  try {
    await program.parseAsync(args, { from: 'user' });
    return { stdout, exitCode: process.exitCode as number | undefined };
  } finally {
    write.mockRestore();
    process.exitCode = exitCodeBefore;
  }
}
