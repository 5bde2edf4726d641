import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { Logger } from '@nestjs/common';

import { ChatModelRewriter } from './chat-model.rewriter';
import { ConversationRewriter } from './conversation.rewriter';

/**
 * A FAKE OpenAI-compatible chat-completions server, started by this test: it records each
 * request and answers what the test sets (a completion, an error status, or nothing in time).
 */
async function startFakeChatServer() {
  const requests: Array<{
    path: string;
    authorization?: string | undefined;
    body: {
      model: string;
      temperature: number;
      messages: Array<{ role: string; content: string }>;
    };
  }> = [];
  const state = { answer: 'query embedding cache in Redis', status: 200, hang: false };
  const server: Server = createServer((req: IncomingMessage, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      requests.push({
        path: req.url ?? '',
        authorization: req.headers.authorization,
        body: JSON.parse(raw),
      });
      if (state.hang) return;
      res.writeHead(state.status, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          state.status === 200
            ? { choices: [{ index: 0, message: { role: 'assistant', content: state.answer } }] }
            : { error: { message: 'overloaded' } },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { url, requests, state, close };
}

const history = [
  { role: 'user' as const, content: 'How does the query service embed a question?' },
  { role: 'assistant' as const, content: 'With the same model as the chunks.' },
  { role: 'user' as const, content: 'Which model does it use?' },
];

describe('ConversationRewriter with a chat model', () => {
  let fake: Awaited<ReturnType<typeof startFakeChatServer>>;
  let rewriter: ConversationRewriter;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    fake = await startFakeChatServer();
    rewriter = new ConversationRewriter(
      new ChatModelRewriter({
        url: fake.url,
        apiKey: 'sk-test',
        model: 'rewriter-1',
        // Generous: a loaded 2-core machine can take a few hundred ms to answer on loopback; only
        // the "no answer in time" case waits it out.
        timeoutMs: 1_500,
      }),
    );
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.requests.length = 0;
    Object.assign(fake.state, {
      answer: 'query embedding cache in Redis',
      status: 200,
      hang: false,
    });
  });

  it('lets the model rewrite a question that has history, sending it the conversation', async () => {
    expect(await rewriter.standaloneQuery('and how is it cached?', history)).toEqual({
      strategy: 'model_rewrite',
      query: 'query embedding cache in Redis',
    });
    const [request] = fake.requests;
    expect(request).toMatchObject({
      path: '/v1/chat/completions',
      authorization: 'Bearer sk-test',
    });
    expect(request!.body).toMatchObject({ model: 'rewriter-1', temperature: 0 });
    expect(request!.body.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'user',
    ]);
    expect(request!.body.messages.at(-1)).toEqual({
      role: 'user',
      content: 'and how is it cached?',
    });
  });

  it('keeps the first line of a chatty answer', async () => {
    fake.state.answer = 'query embedding cache\n\nThis query resolves "it" to…';
    expect((await rewriter.standaloneQuery('and how is it cached?', history)).query).toBe(
      'query embedding cache',
    );
  });

  it.each([
    ['an error status', { status: 503 }],
    ['an empty answer', { answer: '   ' }],
    ['no answer in time', { hang: true }],
  ])('falls back to the rule on %s', async (_case, failure) => {
    Object.assign(fake.state, failure);
    expect(await rewriter.standaloneQuery('and how is it cached?', history)).toEqual({
      strategy: 'history_rule',
      query: 'how is it cached? (query service embed question)',
    });
    expect(fake.requests).toHaveLength(1);
  });

  it('asks no model for a first question', async () => {
    expect(await rewriter.standaloneQuery('How is it cached?', [])).toEqual({
      strategy: 'standalone',
      query: 'How is it cached?',
    });
    expect(fake.requests).toHaveLength(0);
  });
});
