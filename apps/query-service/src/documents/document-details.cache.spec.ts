import { toTenantId } from '@kb/contracts';

import { newDocumentView } from '../../test/support/search.fakes';
import { DocumentDetailsCache } from './document-details.cache';

const ann = { tenantId: toTenantId('t1'), userId: 'ann', roles: [], groups: [], token: 'tok-ann' };
const bob = { ...ann, userId: 'bob', token: 'tok-bob' };
const other = { ...ann, tenantId: toTenantId('t2'), token: 'tok-t2' };

/** A cache whose clock the test moves, with its consumer joined unless `live` is turned off. */
function cache(ttlMs = 30_000) {
  const clock = { now: 0, live: true };
  const details = new DocumentDetailsCache(ttlMs, 100, () => clock.now);
  details.bindLiveness(() => clock.live);
  return { details, clock };
}

/** Looks `ids` up for `caller` and stores what document-service answered for the rest. */
function read(details: DocumentDetailsCache, caller: typeof ann, ids: string[], known: string[]) {
  const lookup = details.lookup(caller, ids);
  const answered = new Map(
    lookup.missing.filter((id) => known.includes(id)).map((id) => [id, newDocumentView(id)]),
  );
  details.store(caller, answered, lookup.since);
  return lookup;
}

describe('DocumentDetailsCache', () => {
  it("serves a token's answer again, to that token only", () => {
    const { details } = cache();
    read(details, ann, ['d1', 'd2'], ['d1', 'd2']);
    expect(details.lookup(ann, ['d1', 'd2', 'd3']).missing).toEqual(['d3']);
    // Another token's ACL may differ: it asks document-service itself.
    expect(details.lookup(bob, ['d1']).missing).toEqual(['d1']);
    expect(details.lookup(other, ['d1']).missing).toEqual(['d1']);
  });

  it('never keeps a document the listing left out (deleted or unreadable)', () => {
    const { details } = cache();
    read(details, ann, ['d1', 'gone'], ['d1']);
    expect(details.lookup(ann, ['d1', 'gone']).missing).toEqual(['gone']);
  });

  it("drops a document's entries for every token on its event, and a tenant's on an ACL event", () => {
    const { details } = cache();
    read(details, ann, ['d1', 'd2'], ['d1', 'd2']);
    read(details, bob, ['d1'], ['d1']);
    read(details, other, ['d1'], ['d1']);
    details.forget('t1', ['d1']);
    expect(details.lookup(ann, ['d1', 'd2']).missing).toEqual(['d1']);
    expect(details.lookup(bob, ['d1']).missing).toEqual(['d1']);
    expect(details.lookup(other, ['d1']).missing).toEqual([]);
    details.forget('t1');
    expect(details.lookup(ann, ['d2']).missing).toEqual(['d2']);
    expect(details.lookup(other, ['d1']).missing).toEqual([]);
  });

  it('does not store a listing that started before an event of its tenant', () => {
    const { details } = cache();
    const lookup = details.lookup(ann, ['d1']);
    details.forget('t1', ['d1']); // the document changed while its old view was on the wire
    details.store(ann, new Map([['d1', newDocumentView('d1')]]), lookup.since);
    expect(details.lookup(ann, ['d1']).missing).toEqual(['d1']);
  });

  it('keeps no document still in the pipeline: document-service may not have applied its status yet', () => {
    const { details } = cache();
    const lookup = details.lookup(ann, ['d1', 'd2', 'd3']);
    details.store(
      ann,
      new Map([
        ['d1', newDocumentView('d1', { status: 'embedding' })],
        ['d2', newDocumentView('d2', { status: 'failed' })],
        ['d3', newDocumentView('d3')],
      ]),
      lookup.since,
    );
    expect(details.lookup(ann, ['d1', 'd2', 'd3']).missing).toEqual(['d1']);
  });

  it('serves an answer for ttlMs from the start of its listing, no longer', () => {
    const { details, clock } = cache(1_000);
    const lookup = details.lookup(ann, ['d1']);
    clock.now = 400; // the listing's round trip
    details.store(ann, new Map([['d1', newDocumentView('d1')]]), lookup.since);
    clock.now = 999;
    expect(details.lookup(ann, ['d1']).missing).toEqual([]);
    clock.now = 1_000;
    expect(details.lookup(ann, ['d1']).missing).toEqual(['d1']);
  });

  it('serves and keeps nothing while the events are not received, nor what it held before', () => {
    const { details, clock } = cache();
    read(details, ann, ['d1'], ['d1']);
    clock.live = false;
    expect(details.lookup(ann, ['d1']).missing).toEqual(['d1']);
    read(details, ann, ['d2'], ['d2']);
    clock.live = true;
    expect(details.lookup(ann, ['d1', 'd2']).missing).toEqual(['d1', 'd2']);
  });

  it('is off at a time to live of 0', () => {
    const { details } = cache(0);
    read(details, ann, ['d1'], ['d1']);
    expect(details.lookup(ann, ['d1']).missing).toEqual(['d1']);
  });
});
