import { z } from 'zod';

/** One message of a conversation, in OpenAI's chat shape. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

export interface ChatModelSettings {
  /** The server's base URL, e.g. `http://host/v1`; `/chat/completions` is appended. */
  url: string;
  apiKey?: string | undefined;
  model: string;
  timeoutMs: number;
}

const INSTRUCTIONS =
  'You rewrite the last user question of a conversation into one standalone search query for a ' +
  'knowledge base. Resolve pronouns and ellipsis from the earlier turns, keep names, identifiers ' +
  'and quoted text exactly, add nothing else. Answer with the query only, on one line.';

const completionSchema = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullable() }) })).min(1),
});

/**
 * Rewrites a follow-up question into a standalone query with an OpenAI-compatible
 * chat-completions server (QUERY_REWRITE_API_URL). Throws on any failure (network, timeout,
 * non-2xx, an answer without text): the caller falls back to the deterministic rule.
 */
export class ChatModelRewriter {
  constructor(private readonly settings: ChatModelSettings) {}

  get model(): string {
    return this.settings.model;
  }

  async rewrite(history: ChatMessage[], question: string): Promise<string> {
    const response = await fetch(`${this.settings.url.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(this.settings.apiKey ? { authorization: `Bearer ${this.settings.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: this.settings.model,
        temperature: 0,
        messages: [
          { role: 'system', content: INSTRUCTIONS },
          ...history.filter((m) => m.role === 'user' || m.role === 'assistant'),
          { role: 'user', content: question },
        ],
      }),
      signal: AbortSignal.timeout(this.settings.timeoutMs),
    });
    if (!response.ok) throw new Error(`chat model answered ${response.status}`);
    const parsed = completionSchema.safeParse(await response.json());
    const text = parsed.success ? parsed.data.choices[0]!.message.content?.trim() : undefined;
    if (!text) throw new Error('chat model answered without a query');
    // One line, as asked; a model that explains itself keeps its first line.
    return text.split('\n')[0]!.trim().slice(0, 4000);
  }
}
