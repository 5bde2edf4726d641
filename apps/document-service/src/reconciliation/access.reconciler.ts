import { setTimeout as sleep } from 'node:timers/promises';

import { type TenantId, Topics } from '@kb/contracts';
import { meter } from '@kb/observability';
import { PeriodicTask } from '@kb/timing';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import type { DocumentRecord } from '../documents/document.model';
import { accessSnapshotOf } from '../documents/document-events.builder';
import { OutboxRelay, type OutboxWake } from '../outbox/outbox.relay';
import { OutboxWriter } from '../outbox/outbox.writer';
import { CLOCK, type Clock } from '../platform/tokens';
import { TransactionRunner, type Trx } from '../platform/transaction.runner';
import { type AccessScope, ReconciliationRepository } from './reconciliation.repository';

const snapshotsSent = meter().createCounter('kb_access_snapshot_documents_total', {
  description:
    'Documents whose readers access reconciliation sent to indexing for comparison, by pass (full, changes, or changes with a stopped full pass resumed)',
});

/** Documents read (and snapshot events written) per transaction. */
export const ACCESS_PAGE = 500;
/**
 * Principal characters per snapshot event at most (an ACL may name hundreds of principals): it
 * stays well under Kafka's 1 MB message limit.
 */
export const SNAPSHOT_CHARS = 200_000;
/** The claim of the full pass, whose row also says where an unfinished one stopped. */
const FULL_PASS = 'access-full';

type AccessRow = Pick<DocumentRecord, 'id' | 'tenantId' | 'principals' | 'metaVersion'>;

/** A pass this replica claimed: which documents it sends, and how it resumes or gives back. */
interface AccessPass {
  claimedAt: Date;
  scope: AccessScope;
  /** A pass of changes only: the previous pass's start, given back if this one stops early. */
  previous?: Date | undefined;
  /** A full pass (or one resumed): the stamp that owns its row in `reconciliation_runs`. */
  stamp?: Date | undefined;
}

/**
 * How long to wait before the next page so that a pass sends at most `perSecond` documents a
 * second (0: no limit), `sent` of them `elapsedMs` after it began.
 */
export function paceDelayMs(elapsedMs: number, sent: number, perSecond: number): number {
  return perSecond > 0 ? Math.max(0, (sent / perSecond) * 1000 - elapsedMs) : 0;
}

/**
 * Access reconciliation (docs/adr/0018): every `ACCESS_RECONCILE_INTERVAL_MS` one replica sends
 * what this service holds of documents' readers (principals and meta version) to indexing as
 * `access_snapshot` events, one per tenant and page. indexing-service compares each entry with
 * what both indexes were last given and repairs any difference, so an ACL change that failed to
 * reach them (a store down, a dead-lettered event, a reordered one) converges within an interval.
 *
 * A pass sends the documents changed since the pass before it started, less one interval (a
 * change committed late, or stamped by a replica whose clock lags, is sent twice rather than
 * never); every `RECONCILE_FULL_INTERVAL_MS`, and on the first pass ever, it sends every
 * document. At a million documents a full pass is about a hundred megabytes of events, parsed by
 * every consumer of `kb.document.v1` (docs/performance.md, "The access reconciliation at scale"),
 * so a pass sends at most `ACCESS_RECONCILE_RATE` documents a second. A full pass that stops
 * (a shutdown, a replica lost) is resumed by a later pass from the last page it sent; a pass of
 * changes that stops gives its claim back, so the next one reads from where it did.
 */
@Injectable()
export class AccessReconciler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(AccessReconciler.name);
  private readonly task: PeriodicTask;
  private readonly stopping = new AbortController();

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly repository: ReconciliationRepository,
    private readonly events: OutboxWriter,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(DOCUMENT_CONFIG)
    private readonly config: Pick<
      DocumentConfig,
      'ACCESS_RECONCILE_INTERVAL_MS' | 'RECONCILE_FULL_INTERVAL_MS' | 'ACCESS_RECONCILE_RATE'
    >,
  ) {
    this.task = new PeriodicTask(
      'access reconciliation',
      config.ACCESS_RECONCILE_INTERVAL_MS,
      () => this.reconcile(),
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    await this.task.stop();
  }

  /**
   * One pass over every tenant's documents, or those changed since the last pass (with the rest
   * of a full pass that stopped), unless another replica started one less than half an interval
   * ago. Returns how many documents were sent, or undefined when the pass was not ours.
   */
  async reconcile(): Promise<number | undefined> {
    const pass = await this.transactions.run((trx) => this.claim(trx));
    if (!pass) return undefined;
    const began = performance.now();
    let sent = 0;
    let after: string | undefined;
    for (;;) {
      const page = await this.transactions.run((trx) => this.sendPage(trx, pass, after));
      if (!page) {
        this.logger.log(`access reconciliation: full pass taken over by another replica`);
        return sent;
      }
      pass.stamp = page.stamp;
      if (page.rows.length > 0) this.outbox.wake();
      sent += page.rows.length;
      if (page.rows.length < ACCESS_PAGE) break;
      after = page.rows[page.rows.length - 1]!.id;
      await this.pace(began, sent);
      if (this.stopping.signal.aborted) return this.stopEarly(pass, sent);
    }
    snapshotsSent.add(sent, {
      pass: pass.stamp ? (pass.scope.changedSince ? 'resumed' : 'full') : 'changes',
    });
    const { changedSince } = pass.scope;
    this.logger.log(
      !changedSince
        ? `access reconciliation: readers of all ${sent} documents sent to indexing`
        : pass.stamp
          ? `access reconciliation: readers of ${sent} documents (the rest of a stopped full pass, and those changed since ${changedSince.toISOString()}) sent to indexing`
          : `access reconciliation: readers of ${sent} documents changed since ${changedSince.toISOString()} sent to indexing`,
    );
    return sent;
  }

  /** Claims a pass: a full one, one of changes with a stopped full pass's rest, or changes. */
  private async claim(trx: Trx): Promise<AccessPass | undefined> {
    const now = this.clock();
    const interval = this.config.ACCESS_RECONCILE_INTERVAL_MS;
    const claimed = await this.repository.claimChangesPass(
      trx,
      'access',
      now,
      interval,
      this.config.RECONCILE_FULL_INTERVAL_MS,
    );
    if (!claimed) return undefined;
    const { changedSince, previous } = claimed;
    if (!changedSince) {
      return {
        claimedAt: now,
        scope: {},
        stamp: await this.repository.startResumable(trx, FULL_PASS, now),
      };
    }
    const stopped = await this.repository.takeOverResumable(
      trx,
      FULL_PASS,
      now,
      new Date(now.getTime() - interval),
    );
    return stopped
      ? { claimedAt: now, scope: { changedSince, everyAfter: stopped.after }, stamp: stopped.stamp }
      : { claimedAt: now, scope: { changedSince }, previous };
  }

  /**
   * One page of snapshot events, and for a full pass its progress (undefined: the pass is no
   * longer ours).
   */
  private async sendPage(
    trx: Trx,
    pass: AccessPass,
    after: string | undefined,
  ): Promise<{ rows: AccessRow[]; stamp?: Date | undefined } | undefined> {
    const rows = await this.repository.accessPage(trx, after, ACCESS_PAGE, pass.scope);
    let stamp: Date | undefined;
    if (pass.stamp) {
      stamp = this.clock();
      const last = rows.at(-1)?.id;
      const through = rows.length < ACCESS_PAGE ? null : laterId(last!, pass.scope.everyAfter);
      if (!(await this.repository.progressResumable(trx, FULL_PASS, pass.stamp, stamp, through))) {
        return undefined;
      }
    }
    for (const [tenantId, documents] of byTenant(rows)) {
      for (const part of bySize(documents)) {
        await this.events.enqueue(trx, Topics.document, tenantId, tenantId, accessSnapshotOf(part));
      }
    }
    return { rows, stamp };
  }

  /** Waits as long as `ACCESS_RECONCILE_RATE` asks, or until the service stops. */
  private async pace(began: number, sent: number): Promise<void> {
    const delay = paceDelayMs(performance.now() - began, sent, this.config.ACCESS_RECONCILE_RATE);
    if (delay === 0 || this.stopping.signal.aborted) return;
    await sleep(delay, undefined, { signal: this.stopping.signal }).catch(() => undefined);
  }

  /** The service stops: a full pass is left for a later one to resume, a pass of changes given back. */
  private async stopEarly(pass: AccessPass, sent: number): Promise<number> {
    if (!pass.stamp && pass.previous) {
      const previous = pass.previous;
      await this.transactions.run((trx) =>
        this.repository.unclaimRun(trx, 'access', pass.claimedAt, previous),
      );
    }
    this.logger.log(
      `access reconciliation: stopped after ${sent} documents; ${pass.stamp ? 'a later pass resumes it' : 'the next pass reads from where it did'}`,
    );
    return sent;
  }
}

/** The greater of two document ids, in the order Postgres sorts uuids. */
function laterId(id: string, other: string | undefined): string {
  return other !== undefined && other > id ? other : id;
}

function byTenant(rows: AccessRow[]): Map<TenantId, AccessRow[]> {
  const groups = new Map<TenantId, AccessRow[]>();
  for (const row of rows) {
    const group = groups.get(row.tenantId) ?? [];
    group.push(row);
    groups.set(row.tenantId, group);
  }
  return groups;
}

/** Consecutive parts of `rows` whose principals add up to at most `SNAPSHOT_CHARS` each. */
export function bySize(rows: AccessRow[], limit = SNAPSHOT_CHARS): AccessRow[][] {
  const parts: AccessRow[][] = [];
  let part: AccessRow[] = [];
  let size = 0;
  for (const row of rows) {
    const rowSize = row.id.length + row.principals.reduce((n, p) => n + p.length + 3, 16);
    if (part.length > 0 && size + rowSize > limit) {
      parts.push(part);
      part = [];
      size = 0;
    }
    part.push(row);
    size += rowSize;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}
