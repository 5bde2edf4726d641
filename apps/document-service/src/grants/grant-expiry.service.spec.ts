import { type Action, principal } from '@kb/auth';
import { Topics } from '@kb/contracts';
import { ErrorKind } from '@kb/errors';

import { documentAclSchema } from '../documents/document.model';
import { OutboxWriter } from '../outbox/outbox.writer';
import {
  type DocumentServiceFixture,
  documentServiceFixture,
  newAccess,
  spool,
  TENANT,
} from '../testing/document-service.fixture';
import { GrantExpiryService } from './grant-expiry.service';

const files = spool();
afterAll(() => files.cleanup());

const END = '2026-11-22T12:00:00.000Z';
const bobUntil = principal.grant('u:bob', new Date(END));
const eng = principal.grant('g:eng', new Date(END));

describe('time-bound document grants (ADR 54)', () => {
  let f: DocumentServiceFixture;
  let job: GrantExpiryService;
  let uploaded: string[];
  const alice = newAccess();
  const readOnly = new Set<Action>(['read']);

  beforeEach(() => {
    f = documentServiceFixture();
    uploaded = [];
    job = new GrantExpiryService(
      // Which documents to look at is SQL (the int-spec); here every uploaded one is a candidate.
      { documentsWithEnded: async () => uploaded.map((id) => ({ tenantId: TENANT, id })) },
      f.documentsRepository,
      f.transactions,
      new OutboxWriter(f.outbox),
      f.relay,
      () => f.now,
    );
  });

  const granted = async () => {
    const document = await f.documents.upload(TENANT, alice, files.file('plan'), {
      acl: {
        users: ['bob', 'cy'],
        groups: [],
        roles: [],
        tenant: false,
        writers: { users: ['bob'], groups: ['eng'] },
        until: { 'u:bob': END, 'g:eng': END },
      },
    });
    uploaded.push(document.id);
    return document;
  };

  it('indexes an ending entry as its grant principal, which alone grants the document', async () => {
    const document = await granted();
    expect(f.outbox.envelopes(Topics.document)[0]!.payload).toMatchObject({
      kind: 'uploaded',
      attributes: { principals: ['u:alice', 'u:cy', eng, bobUntil].sort() },
    });
    // Holding `u:bob` is no longer enough: acl-service adds the grant principal until the end.
    const plainBob = newAccess({ userId: 'bob', documentActions: readOnly });
    await expect(f.documents.get(TENANT, plainBob, document.id)).rejects.toMatchObject({
      kind: ErrorKind.NotFound,
    });
    const bob = newAccess({
      userId: 'bob',
      principals: ['u:bob', bobUntil],
      documentActions: readOnly,
    });
    await expect(f.documents.get(TENANT, bob, document.id)).resolves.toMatchObject({
      id: document.id,
    });
    // The write grant ends with it.
    await expect(
      f.documents.edit(TENANT, bob, document.id, { tags: ['b'] }),
    ).resolves.toMatchObject({ tags: ['b'] });
    await expect(
      f.documents.edit(TENANT, plainBob, document.id, { tags: ['x'] }),
    ).rejects.toMatchObject({ kind: ErrorKind.NotFound });
  });

  it('takes ends only for users and groups the ACL names', () => {
    const acl = { users: ['bob'], writers: { users: [], groups: ['eng'] } };
    expect(
      documentAclSchema.safeParse({ ...acl, until: { 'u:bob': END, 'g:eng': END } }).success,
    ).toBe(true);
    const typo = documentAclSchema.safeParse({ ...acl, until: { 'u:bbo': END } });
    expect(typo.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['until']);
    expect(documentAclSchema.safeParse({ ...acl, until: { 'r:editor': END } }).success).toBe(false);
  });

  it('refuses an end already passed with invalid_acl', async () => {
    const document = await granted();
    await expect(
      f.documents.setAcl(TENANT, alice, document.id, {
        users: ['bob'],
        groups: [],
        roles: [],
        tenant: false,
        until: { 'u:bob': '2026-11-22T09:00:00Z' },
      }),
    ).rejects.toMatchObject({ code: 'invalid_acl', kind: ErrorKind.InvalidArgument });
  });

  it('strips ended entries through the ACL change, audited by system, and nothing before', async () => {
    const document = await granted();
    expect(await job.run()).toBe(0);
    f.now = new Date(END);
    expect(await job.run()).toBe(1);
    expect(await job.run()).toBe(0);
    const after = await f.documents.get(TENANT, alice, document.id);
    expect(after.acl).toEqual({
      users: ['cy'],
      groups: [],
      roles: [],
      tenant: false,
      writers: { users: [], groups: [] },
    });
    expect(f.outbox.envelopes(Topics.document).at(-1)!.payload).toMatchObject({
      kind: 'acl_changed',
      principals: ['u:alice', 'u:cy'],
    });
    const audit = f.outbox.envelopes(Topics.audit).at(-1)!.payload;
    expect(audit).toMatchObject({
      actor: 'system',
      action: 'document_acl_changed',
      documentIds: [document.id],
    });
  });
});
