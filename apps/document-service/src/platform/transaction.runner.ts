import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';

import type { DocumentDatabase } from './db.types';
import { DB } from './tokens';

/**
 * One unit of work, handed by a `TransactionRunner` to the repositories that write in it: what
 * they write commits or rolls back together. Opaque to services, which only pass it on; each
 * runner has its own kind (a class, so that a handle of another runner cannot be passed by mistake).
 */
export abstract class Trx {
  protected readonly unitOfWork = true;
}

export abstract class TransactionRunner {
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  abstract run<T>(work: (trx: Trx) => Promise<T>): Promise<T>;

  /**
   * Runs `work`, which issues exactly one statement, without BEGIN and COMMIT: one statement is
   * atomic on its own, and on a loopback socket each of those two round trips costs a few hundred
   * microseconds (a read's audit record, docs/adr/0029). Work of two statements belongs in `run`.
   */
  abstract statement<T>(work: (trx: Trx) => Promise<T>): Promise<T>;
}

/** A Postgres transaction (or, from `statement`, the pool), as the SQL repositories receive it. */
export class SqlTrx extends Trx {
  constructor(readonly db: Kysely<DocumentDatabase>) {
    super();
  }
}

/** The Kysely transaction behind `trx`; a handle of another runner is a wiring error. */
export function sqlOf(trx: Trx): Kysely<DocumentDatabase> {
  if (trx instanceof SqlTrx) return trx.db;
  throw new Error('a SQL repository was handed a transaction it did not open');
}

@Injectable()
export class SqlTransactionRunner extends TransactionRunner {
  constructor(@Inject(DB) private readonly db: Kysely<DocumentDatabase>) {
    super();
  }

  run<T>(work: (trx: Trx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((db) => work(new SqlTrx(db)));
  }

  statement<T>(work: (trx: Trx) => Promise<T>): Promise<T> {
    return work(new SqlTrx(this.db));
  }
}
