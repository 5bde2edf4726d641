/**
 * A queue of background jobs in a table a service owns, shared by its replicas through leases
 * (docs/adr/0049). `claim` hands the caller up to `limit` due jobs for `leaseMs`: no other claim
 * returns one of them while its lease lasts. The job's handler settles it in the queue's own
 * terms (a delivery logs its try, a clean-up deletes its row, a schedule moves to its next time);
 * a job nobody settles — its holder crashed, or the handler threw — is due again when its lease
 * ends. So every job runs at least once, and a handler must be safe to run twice.
 *
 * Each table keeps its own claim statement (fairness across tenants, the rows a user reads as a
 * log); what they share is this contract, proven by `test/support/lease-queue.conformance.ts`.
 */
export interface LeaseQueue<J> {
  claim(limit: number, leaseMs: number): Promise<J[]>;
}
