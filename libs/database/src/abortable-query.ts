import type { CompiledQuery } from 'kysely';
import { Client, type Pool, type PoolClient, type QueryResultRow } from 'pg';

/** The reason a query stopped by its signal rejects with, when the signal gives none. */
export class QueryAbortedError extends Error {
  constructor() {
    super('the query was cancelled: its time budget ran out');
    this.name = 'QueryAbortedError';
  }
}

const reasonOf = (signal: AbortSignal): unknown => signal.reason ?? new QueryAbortedError();

/**
 * Asks the server to cancel what a connection is running (`pg_cancel_backend`), over a short-lived
 * connection of its own: a pool whose connections are all stuck behind a lock can still cancel.
 * A statement waiting on a lock is cancelled too. Failures are ignored: the caller has already
 * given up on the answer, and the connection is destroyed rather than reused.
 */
async function cancelBackend(pool: Pool, client: PoolClient): Promise<void> {
  const pid = (client as unknown as { processID?: number }).processID;
  if (pid === undefined) return;
  const canceller = new Client(pool.options);
  try {
    await canceller.connect();
    await canceller.query('SELECT pg_cancel_backend($1)', [pid]);
  } catch {
    // The connection is destroyed below; the server ends its statement when it notices.
  } finally {
    await canceller.end().catch(() => undefined);
  }
}

/**
 * Runs `work` on a connection of `pool` until `signal` aborts (docs/adr/0042). Nothing changes on
 * the happy path: no SET, no extra round trip. When the signal aborts first, the call rejects at
 * once with the signal's reason, the server is asked to cancel the statement (`pg_cancel_backend`,
 * which also ends a wait on a lock), and the connection is destroyed, not returned, once the
 * statement has stopped, so a late cancel can never hit the next user of that connection.
 * Without a signal this is `pool.connect()`, `work`, `release()`.
 */
export async function withAbortableClient<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  if (!signal) {
    const client = await pool.connect();
    try {
      return await work(client);
    } finally {
      client.release();
    }
  }
  signal.throwIfAborted();
  const connecting = pool.connect();
  const client = await raceAbort(connecting, signal).catch((error: unknown) => {
    // Given up while waiting for a connection: hand it back when it comes.
    connecting.then(
      (late) => late.release(),
      () => undefined,
    );
    throw error;
  });
  let cancelled = false;
  const onAbort = () => {
    cancelled = true;
    void cancelBackend(pool, client);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  const running = work(client);
  const settled = running.then(
    () => undefined,
    () => undefined,
  );
  void settled.finally(() => {
    signal.removeEventListener('abort', onAbort);
    client.release(cancelled ? new QueryAbortedError() : undefined);
  });
  return raceAbort(running, signal);
}

/** `work`'s outcome, or a rejection with the signal's reason as soon as it aborts. */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(reasonOf(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reasonOf(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/**
 * Runs a compiled Kysely statement (`sql<Row>\`…\`.compile(db)`) on `client`, a connection
 * `withAbortableClient` lent, and returns its rows: the statement is typed by the caller's
 * `Kysely<DB>`, the connection is the one a deadline can cancel.
 */
export async function queryOn<Row>(
  client: PoolClient,
  statement: CompiledQuery<Row>,
): Promise<Row[]> {
  const { rows } = await client.query<Row & QueryResultRow>(statement.sql, [
    ...statement.parameters,
  ]);
  return rows;
}
