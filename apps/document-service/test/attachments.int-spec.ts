import { createHash, randomUUID } from 'node:crypto';

import { toTenantId } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import { AttachmentIntake } from '../src/attachments/attachment-intake';
import { MailAttachmentLinks } from '../src/attachments/attachment-links';
import { SqlAttachmentsRepository } from '../src/attachments/attachments-sql.repository';
import { placeHoldSchema } from '../src/holds/legal-hold.model';
import { migrations } from '../src/migrations';
import type { DocumentDatabase } from '../src/platform/db.types';
import { newAccess, spool } from '../src/testing/document-service.fixture';
import { unlimitedQuotas } from '../src/usage/usage.service';
import { sqlDocumentService } from './support/sql-document-service';

jest.setTimeout(30_000);

const files = spool();
afterAll(() => files.cleanup());

/**
 * A mail's attachments over real Postgres (docs/adr/0048): the `attached_to` link and the
 * skipped list as the columns hold them, idempotence under the external-id index, and the
 * mail's delete taking its attachments with it but for a held one.
 */
describe('mail attachments (SQL)', () => {
  const schema = `attachments_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const tenant = toTenantId('t1');
  const alice = newAccess({ tenantId: tenant });
  const admin = newAccess({ tenantId: tenant, userId: 'root', isAdmin: true });
  const now = () => new Date('2026-11-27T07:00:00Z');
  let pool: Pool;
  let db: Kysely<DocumentDatabase>;
  let service: ReturnType<typeof sqlDocumentService>;
  let intake: AttachmentIntake;

  beforeAll(async () => {
    pool = createPool({ url: process.env['DATABASE_URL']!, schema, maxConnections: 2 });
    db = createDatabase<DocumentDatabase>(pool);
    await migrateToLatest(db, schema, migrations);
    service = sqlDocumentService(db, now);
    const links = new MailAttachmentLinks(
      service.documentsRepository,
      service.holds,
      service.writer,
      service.blobs,
    );
    intake = new AttachmentIntake(
      service.documentsRepository,
      new SqlAttachmentsRepository(db),
      links,
      service.uploads,
      service.membership,
      service.transactions,
      service.relay,
      service.blobs,
      now,
      unlimitedQuotas,
      { MAX_UPLOAD_BYTES: 1024 },
    );
  });

  afterAll(async () => {
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(db);
    await pool.end();
  });

  const report = async (mailId: string, version: number, contents: string[]) => {
    const extracted = [];
    for (const [index, content] of contents.entries()) {
      const key = `derived/${tenant}/${mailId}/v${version}/attachments/${index}`;
      await service.blobs.put(key, Buffer.from(content));
      extracted.push({
        index,
        filename: `part-${index}.md`,
        contentType: 'text/markdown',
        sizeBytes: Buffer.byteLength(content),
        sha256: createHash('sha256').update(content).digest('hex'),
        blob: { bucket: service.blobs.bucket, key },
      });
    }
    const skipped = [
      { index: contents.length, filename: 'x.gif', reason: 'unsupported_type' as const },
    ];
    const event = { documentId: mailId, version, status: 'parsing' as const };
    return [
      { tenantId: tenant, event: { ...event, attachments: { extracted, skipped } }, at: now() },
    ];
  };

  it("links, lists and deletes a mail's attachments, once each, a held one kept", async () => {
    const mail = await service.documents.upload(
      tenant,
      alice,
      files.file('From: a@x\r\n\r\nhi', 'm.eml'),
      {},
    );
    const events = await report(mail.id, 1, ['# One', '# Two']);
    await intake.receive(events);
    await intake.receive(events);
    const view = await service.documents.get(tenant, alice, mail.id);
    expect(view.attachments).toEqual({
      documents: [
        { id: expect.any(String), filename: 'part-0.md', status: 'pending' },
        { id: expect.any(String), filename: 'part-1.md', status: 'pending' },
      ],
      skipped: [{ index: 2, filename: 'x.gif', reason: 'unsupported_type' }],
    });
    const [one, two] = view.attachments!.documents;
    expect(await service.documents.get(tenant, alice, one!.id)).toMatchObject({
      attachedTo: mail.id,
      externalId: `attachment:${mail.id}:v1:0`,
    });
    // A report of a version the mail does not have changes nothing.
    await new SqlAttachmentsRepository(db).recordSkipped(tenant, mail.id, 2, []);
    expect((await service.documents.get(tenant, alice, mail.id)).attachments!.skipped).toHaveLength(
      1,
    );

    await service.legalHolds.place(
      tenant,
      admin,
      placeHoldSchema.parse({ name: 'inquiry', documentIds: [two!.id] }),
    );
    const deleted = await service.documents.delete(tenant, alice, mail.id);
    expect(deleted.attachments).toEqual({
      deleted: [one!.id],
      held: [{ documentId: two!.id, hold: 'inquiry' }],
    });
    const left = await db.selectFrom('documents').select(['id', 'attached_to']).execute();
    expect(left).toEqual([{ id: two!.id, attached_to: mail.id }]);
  });

  it("takes a mail's attachments with it when retention or an erasure deletes it, a held one kept", async () => {
    const mailOf = async (matter: string) => {
      const mail = await service.documents.upload(
        tenant,
        alice,
        files.file(`From: c@x\r\n\r\n${matter}`, `${matter}.eml`),
        { metadata: { matter } },
      );
      await intake.receive(await report(mail.id, 1, [`# ${matter} one`, `# ${matter} two`]));
      const view = await service.documents.get(tenant, alice, mail.id);
      return { mail: mail.id, attached: view.attachments!.documents.map(({ id }) => id) };
    };
    const alive = async (ids: string[]) =>
      (await db.selectFrom('documents').select('id').where('id', 'in', ids).execute()).length;

    // Retention: the mail's own date passed; its attachments have none.
    const due = await mailOf('due');
    await service.documents.setExpiry(tenant, admin, due.mail, new Date('2026-11-27T06:00:00Z'));
    await service.legalHolds.place(
      tenant,
      admin,
      placeHoldSchema.parse({ name: 'kept', documentIds: [due.attached[1]] }),
    );
    await service.retention.runTenant(tenant, now());
    expect(await alive([due.mail, due.attached[0]!])).toBe(0);
    expect(await alive([due.attached[1]!])).toBe(1);

    // An erasure by a filter that only the mail matches (the attachments have no metadata).
    const erased = await mailOf('erased');
    const job = await service.erasures.request(tenant, admin, {
      where: { 'metadata.matter': 'erased' },
    });
    await service.erasures.idle();
    expect(await service.erasures.get(tenant, admin, job.id)).toMatchObject({
      status: 'succeeded',
      deleted: 3,
    });
    expect(await alive([erased.mail, ...erased.attached])).toBe(0);
  });

  it("gives the attachments the mail's new ACL in the change's transaction", async () => {
    const mail = await service.documents.upload(
      tenant,
      alice,
      files.file('From: b@x\r\n\r\nacl', 'n.eml'),
      { acl: { users: [], groups: ['crew'], roles: [], tenant: false } },
    );
    await intake.receive(await report(mail.id, 1, ['# Three']));
    const [three] = (await service.documents.get(tenant, alice, mail.id)).attachments!.documents;
    const principals = async () =>
      (
        await db
          .selectFrom('documents')
          .select('principals')
          .where('id', '=', three!.id)
          .executeTakeFirstOrThrow()
      ).principals;
    expect(await principals()).toContain('g:crew');
    await service.documents.setAcl(tenant, alice, mail.id, {
      users: ['bob'],
      groups: [],
      roles: [],
      tenant: false,
    });
    expect([...(await principals())].sort()).toEqual(['u:alice', 'u:bob']);
  });
});
