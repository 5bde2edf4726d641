/**
 * A function to await in a long loop: every `calls`th call it lets the event loop run, so a large
 * document does not stall the Kafka consumer's heartbeats while it is chunked.
 */
export function yieldEvery(calls: number): () => Promise<void> {
  let count = 0;
  return async () => {
    if (++count % calls === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  };
}
