/**
 * A mail's attachments as documents of their own (issue 38, docs/adr/0048): a mail made in the
 * test by nodemailer's composer carries a DOCX (made by `docx`) with a word of its own. The mail
 * is indexed; the attachment is its own `indexed` document linked to the mail, and a search for
 * its word finds the attachment, not the mail; deleting the mail removes both.
 */
import { createRequire } from 'node:module';

import { Document, Packer, Paragraph } from 'docx';

import { useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(300_000);

const WORD = 'quillbarrow';

async function mailWithDocx(): Promise<Buffer> {
  const docx = await Packer.toBuffer(
    new Document({
      sections: [{ children: [new Paragraph(`The ${WORD} manifest lists every crate.`)] }],
    }),
  );
  // nodemailer's RFC 5322 composer (a dependency of mailparser): no types are published for it.
  const require = createRequire(__filename);
  const MailComposer = require('nodemailer/lib/mail-composer') as new (mail: object) => {
    compile(): { build(): Promise<Buffer> };
  };
  return new MailComposer({
    from: 'ana@example.com',
    to: 'ops@example.com',
    subject: 'Cargo papers',
    text: 'The manifest for the evening tide is attached.',
    attachments: [
      { filename: 'manifest.docx', content: docx },
      { filename: 'crate.gif', content: Buffer.from('GIF89a', 'latin1'), contentType: 'image/gif' },
    ],
  })
    .compile()
    .build();
}

describe('mail attachments', () => {
  const suite = useSuite('mail-attachments', 8700);
  const final = (d: { status: string }) => ['indexed', 'failed'].includes(d.status);

  it('indexes a mail and its DOCX attachment as two linked documents, and deletes both with the mail', async () => {
    const response = await suite.upload('papers.eml', await mailWithDocx(), 'message/rfc822');
    expect(response.status).toBe(202);
    const { id: mailId } = (await response.json()) as { id: string };
    expect(await waitFor(() => suite.getDocument(mailId), final, 120_000)).toMatchObject({
      status: 'indexed',
    });
    const mail = await waitFor(
      () => suite.getDocument(mailId),
      (d) => (d['attachments'] as { documents: unknown[] } | undefined)?.documents.length === 1,
      60_000,
    );
    const attachments = mail['attachments'] as {
      documents: Array<{ id: string; filename: string }>;
      skipped: unknown[];
    };
    expect(attachments.skipped).toEqual([
      { index: 1, filename: 'crate.gif', reason: 'unsupported_type' },
    ]);
    const [{ id: attachmentId, filename }] = attachments.documents as [
      { id: string; filename: string },
    ];
    expect(filename).toBe('manifest.docx');
    const attachment = await waitFor(() => suite.getDocument(attachmentId), final, 120_000);
    expect(attachment).toMatchObject({
      status: 'indexed',
      title: 'manifest.docx',
      attachedTo: mailId,
      externalId: `attachment:${mailId}:v1:0`,
    });

    const found = await suite.search({ query: WORD, topK: 5, mode: 'lexical' });
    const ids = found.hits.map((hit) => hit.documentId);
    expect(ids).toContain(attachmentId);
    expect(ids).not.toContain(mailId);

    const deleted = await fetch(`${suite.documentUrl}/v1/documents/${mailId}`, {
      method: 'DELETE',
      headers: await suite.auth(),
    });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toMatchObject({
      documentId: mailId,
      attachments: { deleted: [attachmentId], held: [] },
    });
    for (const id of [mailId, attachmentId]) {
      const gone = await fetch(`${suite.documentUrl}/v1/documents/${id}`, {
        headers: await suite.auth(),
      });
      expect({ id, status: gone.status }).toEqual({ id, status: 404 });
    }
    await waitFor(
      () => suite.search({ query: WORD, topK: 5, mode: 'lexical' }),
      (result) => !result.hits.some((hit) => hit.documentId === attachmentId),
      60_000,
    );
  });
});
