import { ExtractionError } from './extraction.errors';
import type { Extracted, ExtractInput, ExtractionLimits } from './extraction.model';
import { htmlToText } from './html.extractor';
import { TextBuilder } from './text.builder';
import { localName, readPart, requirePart, resolvePart, walkXml } from './xml.parts';
import { inspectZip } from './zip.inspector';

const CONTAINER = 'META-INF/container.xml';

/**
 * An EPUB's chapters in reading order (the package's spine), each read as HTML (html.extractor.ts).
 * A chapter whose text does not begin with a heading gets one, from its <title> or its number, so
 * every chapter starts a heading section. The navigation document is not a chapter. The book's
 * title comes from the package's `dc:title`. The archive is counted first (zip.inspector.ts).
 */
export async function extractEpub(
  input: ExtractInput,
  limits: ExtractionLimits,
): Promise<Extracted> {
  const zip = await inspectZip(input.body, limits, input.filename);
  let packagePath: string | undefined;
  walkXml(await requirePart(zip, CONTAINER, input.filename), {
    open(name, attributes) {
      if (localName(name) === 'rootfile' && !packagePath) packagePath = attributes['full-path'];
    },
  });
  if (!packagePath) {
    throw new ExtractionError('parse_error', `"${input.filename}" names no package document`);
  }
  const opf = await requirePart(zip, resolvePart('', packagePath), input.filename);
  const manifest = new Map<string, { href: string; nav: boolean }>();
  const spine: string[] = [];
  let title = '';
  let inTitle = false;
  walkXml(opf, {
    open(name, attributes) {
      const local = localName(name);
      if (local === 'item' && attributes.id && attributes.href) {
        manifest.set(attributes.id, {
          href: resolvePart(packagePath!, attributes.href),
          nav: (attributes.properties ?? '').split(/\s+/).includes('nav'),
        });
      } else if (local === 'itemref' && attributes.idref) spine.push(attributes.idref);
      else if (name === 'dc:title' && !title) inTitle = true;
    },
    text(text) {
      if (inTitle) title += text;
    },
    close(name) {
      if (name === 'dc:title') inTitle = false;
    },
  });
  const out = new TextBuilder();
  let chapter = 0;
  for (const idref of spine) {
    const item = manifest.get(idref);
    if (!item || item.nav) continue;
    const html = await readPart(zip, item.href);
    if (html === undefined) continue;
    const { text, title: chapterTitle } = htmlToText(html);
    if (!/\S/.test(text)) continue;
    chapter++;
    if (!text.startsWith('#')) out.heading(1, chapterTitle ?? `Chapter ${chapter}`);
    out.block(text);
  }
  const bookTitle = title.replace(/\s+/g, ' ').trim();
  return { text: out.result().text, format: 'epub', ...(bookTitle ? { title: bookTitle } : {}) };
}
