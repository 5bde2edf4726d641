import { createHash } from 'node:crypto';

import { type MailAttachments, Topics } from '@kb/contracts';
import { QuotaExceededError } from '@kb/errors';

import { placeHoldSchema } from '../holds/legal-hold.model';
import { createKnowledgeBaseSchema } from '../knowledge-bases/knowledge-base.model';
import {
  type DocumentServiceFixture,
  documentServiceFixture,
  newAccess,
  spool,
  TENANT,
} from '../testing/document-service.fixture';
import { InMemoryAttachmentsRepository } from '../testing/in-memory-attachments.repository';
import type { QuotaCheck } from '../usage/usage.service';
import { AttachmentIntake } from './attachment-intake';
import { MailAttachmentLinks } from './attachment-links';

const files = spool();
afterAll(() => files.cleanup());

const alice = newAccess();
const admin = newAccess({ userId: 'root', isAdmin: true });

describe("a mail's attachments in document-service", () => {
  let f: DocumentServiceFixture;
  let intake: AttachmentIntake;
  /** Knowledge bases over this many bytes of new documents are over quota. */
  let quotaBytes: number;

  beforeEach(() => {
    f = documentServiceFixture();
    quotaBytes = Infinity;
    const quotas: QuotaCheck = {
      beforeUpload: async (_tenant, _bases, bytes) => {
        if (bytes > quotaBytes) {
          throw new QuotaExceededError({ quota: 'bytes', limit: quotaBytes, used: 0 });
        }
      },
      beforeKnowledgeBase: async () => {},
    };
    const links = new MailAttachmentLinks(f.documentsRepository, f.holds, f.writer, f.blobs);
    intake = new AttachmentIntake(
      f.documentsRepository,
      new InMemoryAttachmentsRepository(f.db),
      links,
      f.uploads,
      f.membership,
      f.transactions,
      f.relay,
      f.blobs,
      () => f.now,
      quotas,
      { MAX_UPLOAD_BYTES: 1024 },
    );
  });

  /** A mail uploaded by alice, shared with a group, in two knowledge bases. */
  const uploadMail = async () => {
    for (const id of ['ops', 'legal']) {
      await f.knowledgeBases.create(
        TENANT,
        alice,
        createKnowledgeBaseSchema.parse({ id, name: id }),
      );
    }
    return f.documents.upload(TENANT, alice, files.file('From: a@x\r\n\r\nhi', 'm.eml'), {
      knowledgeBaseIds: ['ops', 'legal'],
      tags: ['harbour'],
      acl: { users: [], groups: ['crew'], roles: [], tenant: false },
    });
  };

  /** The parser's report of version `version` of the mail: its attachments stored as it would. */
  const report = async (
    mailId: string,
    version: number,
    contents: Array<[string, string]>,
    skipped: MailAttachments['skipped'] = [],
  ) => {
    const extracted = [];
    for (const [index, [filename, content]] of contents.entries()) {
      const key = `derived/${TENANT}/${mailId}/v${version}/attachments/${index}`;
      await f.blobs.put(key, Buffer.from(content));
      extracted.push({
        index,
        filename,
        contentType: 'text/markdown',
        sizeBytes: Buffer.byteLength(content),
        sha256: createHash('sha256').update(content).digest('hex'),
        blob: { bucket: f.blobs.bucket, key },
      });
    }
    const event = { documentId: mailId, version, status: 'parsing' as const };
    return [
      { tenantId: TENANT, event: { ...event, attachments: { extracted, skipped } }, at: f.now },
    ];
  };

  const attachmentsOf = async (mailId: string) =>
    (await f.documents.get(TENANT, admin, mailId)).attachments;

  it("makes each a document in the mail's knowledge bases, with its ACL and uploader, linked to it", async () => {
    const mail = await uploadMail();
    const skipped = [{ index: 2, filename: 'logo.gif', reason: 'unsupported_type' as const }];
    await intake.receive(
      await report(
        mail.id,
        1,
        [
          ['tides.md', '# Tides'],
          ['notes.md', '# Notes'],
        ],
        skipped,
      ),
    );
    const view = await attachmentsOf(mail.id);
    expect(view).toEqual({
      documents: [
        { id: expect.any(String), filename: 'tides.md', status: 'pending' },
        { id: expect.any(String), filename: 'notes.md', status: 'pending' },
      ],
      skipped,
    });
    const child = await f.documents.get(TENANT, alice, view!.documents[0]!.id);
    expect(child).toMatchObject({
      title: 'tides.md',
      attachedTo: mail.id,
      ownerId: 'alice',
      acl: mail.acl,
      explicitKnowledgeBaseIds: ['ops', 'legal'],
      tags: ['harbour'],
      externalId: `attachment:${mail.id}:v1:0`,
    });
    expect((await f.blobs.get(`blobs/${TENANT}/sha256/${child.sha256}`)).toString()).toBe(
      '# Tides',
    );
    // Its `uploaded` event says it is an attachment: the parser reads none of its own.
    const uploaded = f.outbox
      .envelopes(Topics.document)
      .filter((e) => e.payload.kind === 'uploaded' && e.payload.documentId === child.id);
    expect(uploaded.map((e) => e.payload)).toEqual([
      expect.objectContaining({ attachedTo: mail.id }),
    ]);
    // A mail without attachments shows none; the mail itself is linked to nothing.
    const plain = await f.documents.upload(TENANT, alice, files.file('From: c@x\r\n\r\nno'), {});
    await intake.receive(await report(plain.id, 1, []));
    expect(await attachmentsOf(plain.id)).toBeUndefined();
    expect((await f.documents.get(TENANT, alice, mail.id)).attachedTo).toBeUndefined();
  });

  it("gives its attachments the mail's new ACL, each with its own event and audit record", async () => {
    const mail = await uploadMail();
    await intake.receive(await report(mail.id, 1, [['tides.md', '# Tides']]));
    const [attachment] = (await attachmentsOf(mail.id))!.documents;
    const acl = { users: ['bob'], groups: [], roles: [], tenant: false };
    await f.documents.setAcl(TENANT, alice, mail.id, acl);
    const child = await f.documents.get(TENANT, admin, attachment!.id);
    expect(child.acl).toEqual(acl);
    // The crew no longer reads the mail, nor what was attached to it.
    const crew = newAccess({ userId: 'carol', principals: ['u:carol', 'g:crew'] });
    await expect(f.documents.get(TENANT, crew, attachment!.id)).rejects.toThrow(/not found/);
    const changed = f.outbox
      .envelopes(Topics.document)
      .filter((e) => e.payload.kind === 'acl_changed' && e.payload.documentId === attachment!.id);
    expect(changed).toHaveLength(1);
    const audits = f.outbox
      .envelopes(Topics.audit)
      .map((e) => e.payload as { action: string; actor: string; documentIds: string[] })
      .filter((a) => a.action === 'document_acl_changed' && a.documentIds.includes(attachment!.id));
    expect(audits.map((a) => a.actor)).toEqual(['alice']);
  });

  it("gives an attachment made while the mail's ACL changed the mail's ACL as committed", async () => {
    const mail = await uploadMail();
    const acl = { users: ['bob'], groups: [], roles: [], tenant: false };
    // The intake reads the mail, then the owner's change commits before the attachment is made.
    const findById = f.documentsRepository.findById.bind(f.documentsRepository);
    jest.spyOn(f.documentsRepository, 'findById').mockImplementationOnce(async (...args) => {
      const read = await findById(...args);
      await f.documents.setAcl(TENANT, alice, mail.id, acl);
      return read;
    });
    await intake.receive(await report(mail.id, 1, [['tides.md', '# Tides']]));
    const [attachment] = (await attachmentsOf(mail.id))!.documents;
    expect((await f.documents.get(TENANT, admin, attachment!.id)).acl).toEqual(acl);
  });

  it('makes no duplicates when the report is delivered again', async () => {
    const mail = await uploadMail();
    const events = await report(mail.id, 1, [['tides.md', '# Tides']]);
    await intake.receive(events);
    await intake.receive(events);
    expect((await attachmentsOf(mail.id))!.documents).toHaveLength(1);
    expect(f.db.documents.size).toBe(2);
  });

  it('skips an attachment over a quota or the upload limit, and the mail says so', async () => {
    const mail = await uploadMail();
    quotaBytes = 10;
    await intake.receive(
      await report(mail.id, 1, [
        ['small.md', '# Tides'],
        ['long.md', '#'.repeat(20)],
        ['huge.md', 'x'.repeat(2000)],
      ]),
    );
    expect(await attachmentsOf(mail.id)).toEqual({
      documents: [{ id: expect.any(String), filename: 'small.md', status: 'pending' }],
      skipped: [
        { index: 1, filename: 'long.md', reason: 'quota_exceeded' },
        { index: 2, filename: 'huge.md', reason: 'too_large' },
      ],
    });
  });

  it('ignores a report of a version the mail no longer has, and of a deleted mail', async () => {
    const mail = await uploadMail();
    await f.documents.replaceContent(
      TENANT,
      alice,
      mail.id,
      files.file('From: b@x\r\n\r\nv2', 'm.eml'),
    );
    await intake.receive(await report(mail.id, 1, [['tides.md', '# Tides']]));
    expect(f.db.documents.size).toBe(1);
    await f.documents.delete(TENANT, alice, mail.id);
    await intake.receive(await report(mail.id, 2, [['tides.md', '# Tides']]));
    expect(f.db.documents.size).toBe(0);
  });

  it('replaces the attachments of the earlier version when the mail is uploaded again', async () => {
    const mail = await uploadMail();
    await intake.receive(await report(mail.id, 1, [['tides.md', '# Tides']]));
    const [old] = (await attachmentsOf(mail.id))!.documents;
    await f.documents.replaceContent(
      TENANT,
      alice,
      mail.id,
      files.file('From: b@x\r\n\r\nv2', 'm.eml'),
    );
    await intake.receive(await report(mail.id, 2, [['notes.md', '# Notes']]));
    expect((await attachmentsOf(mail.id))!.documents.map((d) => d.filename)).toEqual(['notes.md']);
    const deleted = f.outbox.envelopes(Topics.document).filter((e) => e.payload.kind === 'deleted');
    expect(deleted.map((e) => e.key)).toEqual([old!.id]);
  });

  it('deletes the attachments with the mail, but for a held one, which the delete reports', async () => {
    const mail = await uploadMail();
    await intake.receive(
      await report(mail.id, 1, [
        ['tides.md', '# Tides'],
        ['notes.md', '# Notes'],
      ]),
    );
    const [tides, notes] = (await attachmentsOf(mail.id))!.documents;
    await f.legalHolds.place(
      TENANT,
      admin,
      placeHoldSchema.parse({ name: 'inquiry', documentIds: [notes!.id] }),
    );
    const result = await f.documents.delete(TENANT, alice, mail.id);
    expect(result.attachments).toEqual({
      deleted: [tides!.id],
      held: [{ documentId: notes!.id, hold: 'inquiry' }],
    });
    const deleted = f.outbox.envelopes(Topics.document).filter((e) => e.payload.kind === 'deleted');
    expect(deleted.map((e) => e.key).sort()).toEqual([mail.id, tides!.id].sort());
    await expect(f.documents.get(TENANT, alice, tides!.id)).rejects.toMatchObject({
      code: 'document_not_found',
    });
    expect(await f.documents.get(TENANT, alice, notes!.id)).toMatchObject({ attachedTo: mail.id });
  });

  it('refuses the reserved external-id prefix to uploads', async () => {
    await expect(
      f.documents.upload(TENANT, alice, files.file('x'), { externalId: 'attachment:x:v1:0' }),
    ).rejects.toMatchObject({ code: 'external_id_reserved' });
  });
});
