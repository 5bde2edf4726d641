import { ExtractionError } from './extraction.errors';
import type { Extracted, ExtractInput, ExtractionLimits } from './extraction.model';
import { type Slide, slidesToText } from './text.builder';
import {
  localName,
  ParagraphCollector,
  readPart,
  relationships,
  requirePart,
  walkXml,
} from './xml.parts';
import { inspectZip } from './zip.inspector';

const PRESENTATION = 'ppt/presentation.xml';

/**
 * Slides in presentation order (`p:sldIdLst`), each slide's text paragraphs (`a:p`, runs `a:t`)
 * and its speaker notes; a slide is page n. Fields (slide numbers, dates) are not text. The
 * archive is counted first (zip.inspector.ts) and its parts are read from that same JSZip.
 */
export async function extractPptx(
  input: ExtractInput,
  limits: ExtractionLimits,
): Promise<Extracted> {
  const zip = await inspectZip(input.body, limits, input.filename);
  const presentation = await requirePart(zip, PRESENTATION, input.filename);
  const { byId } = await relationships(zip, PRESENTATION);
  const order: string[] = [];
  walkXml(presentation, {
    open(name, attributes) {
      const id = attributes['r:id'];
      if (localName(name) === 'sldId' && id && byId.has(id)) order.push(byId.get(id)!);
    },
  });
  const slides: Slide[] = [];
  for (const path of order) {
    const xml = await readPart(zip, path);
    if (xml === undefined) {
      throw new ExtractionError('parse_error', `"${input.filename}" has no slide ${path}`);
    }
    const [notesPath] = (await relationships(zip, path)).byType('/notesSlide');
    const notesXml = notesPath ? await readPart(zip, notesPath) : undefined;
    slides.push({
      paragraphs: drawingParagraphs(xml),
      notes: notesXml ? drawingParagraphs(notesXml, true) : [],
    });
  }
  return { ...slidesToText(slides), format: 'pptx' };
}

/**
 * The paragraphs of a DrawingML part. In a notes page, only the notes body placeholder is read:
 * the slide image and the slide-number placeholder are not notes.
 */
function drawingParagraphs(xml: string, notesOnly = false): string[] {
  const paragraphs: string[] = [];
  const collector = new ParagraphCollector((name) => name === 'a:p');
  let inRun = false;
  let inField = 0;
  let shape: { body: boolean } | undefined;
  walkXml(xml, {
    open(name, attributes) {
      if (name === 'p:sp') shape = { body: false };
      else if (name === 'p:ph' && shape) shape.body = attributes.type === 'body';
      else if (name === 'a:fld') inField++;
      else if (name === 'a:t') inRun = true;
      else if (name === 'a:br') collector.text(' ');
      else collector.open(name);
    },
    text(text) {
      if (inRun && inField === 0) collector.text(text);
    },
    close(name) {
      if (name === 'a:t') inRun = false;
      else if (name === 'a:fld') inField--;
      else if (name === 'p:sp') shape = undefined;
      const paragraph = collector.close(name);
      if (paragraph && (!notesOnly || shape?.body)) paragraphs.push(paragraph);
    },
  });
  return paragraphs;
}
