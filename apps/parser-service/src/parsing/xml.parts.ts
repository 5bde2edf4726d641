import { posix } from 'node:path';

import { Parser } from 'htmlparser2';
import type JSZip from 'jszip';

import { ExtractionError } from './extraction.errors';

export interface XmlHandlers {
  open?(name: string, attributes: Record<string, string>): void;
  text?(text: string): void;
  close?(name: string): void;
}

/** Streams an XML document's elements (names as written, prefix included) and decoded text. */
export function walkXml(xml: string, handlers: XmlHandlers): void {
  const parser = new Parser(
    {
      onopentag: (name, attributes) => handlers.open?.(name, attributes),
      ontext: (text) => handlers.text?.(text),
      onclosetag: (name) => handlers.close?.(name),
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.write(xml);
  parser.end();
}

/** A part of a counted archive (zip.inspector.ts) as text; `undefined` when it has none. */
export async function readPart(zip: JSZip, path: string): Promise<string | undefined> {
  return zip.file(path)?.async('string');
}

/** A part the format cannot do without: its absence is `parse_error`. */
export async function requirePart(zip: JSZip, path: string, filename: string): Promise<string> {
  const part = await readPart(zip, path);
  if (part === undefined) {
    throw new ExtractionError('parse_error', `"${filename}" has no ${path}`);
  }
  return part;
}

/** The archive path a relationship or link `target` names, relative to the part `from`. */
export function resolvePart(from: string, target: string): string {
  let decoded = target.split('#')[0]!;
  try {
    decoded = decodeURIComponent(decoded);
  } catch {
    // a malformed escape is read as written
  }
  if (decoded.startsWith('/')) return posix.normalize(decoded.slice(1));
  return posix.normalize(posix.join(posix.dirname(from), decoded));
}

/** A relationships part (`_rels/*.rels`) as id → target path, and type suffix → target paths. */
export async function relationships(
  zip: JSZip,
  part: string,
): Promise<{ byId: Map<string, string>; byType: (suffix: string) => string[] }> {
  const relsPath = posix.join(posix.dirname(part), '_rels', `${posix.basename(part)}.rels`);
  const xml = (await readPart(zip, relsPath)) ?? '';
  const found: Array<{ id: string; type: string; target: string }> = [];
  walkXml(xml, {
    open(name, attributes) {
      if (localName(name) !== 'Relationship' || attributes.TargetMode === 'External') return;
      const { Id: id, Type: type, Target: target } = attributes;
      if (id && target) found.push({ id, type: type ?? '', target: resolvePart(part, target) });
    },
  });
  return {
    byId: new Map(found.map((rel) => [rel.id, rel.target])),
    byType: (suffix) => found.filter((rel) => rel.type.endsWith(suffix)).map((rel) => rel.target),
  };
}

/** An element's name without its namespace prefix. */
export const localName = (name: string): string => name.slice(name.indexOf(':') + 1);

/**
 * Collects paragraphs from a stream of elements: text inside a paragraph element joins into one
 * paragraph, nested paragraphs (a text box inside a paragraph) come out on their own.
 */
export class ParagraphCollector {
  private readonly stack: string[] = [];

  constructor(private readonly isParagraph: (name: string) => boolean) {}

  get inParagraph(): boolean {
    return this.stack.length > 0;
  }

  /** Returns true when `name` opened a paragraph. */
  open(name: string): boolean {
    if (!this.isParagraph(name)) return false;
    this.stack.push('');
    return true;
  }

  text(text: string): void {
    if (this.stack.length > 0) this.stack[this.stack.length - 1] += text;
  }

  /** The finished paragraph when `name` closed one (whitespace collapsed; may be empty). */
  close(name: string): string | undefined {
    if (!this.isParagraph(name) || this.stack.length === 0) return undefined;
    return this.stack.pop()!.replace(/\s+/g, ' ').trim();
  }
}

/**
 * An XML document as plain structured text: one `element: text` line per run of text, in document
 * order, attributes left out. Entities are decoded, never expanded from a DTD (no entity bombs).
 */
export function xmlToText(xml: string): string {
  const lines: string[] = [];
  const open: string[] = [];
  let pending = '';
  const flush = () => {
    const clean = pending.replace(/\s+/g, ' ').trim();
    if (clean) lines.push(open.length > 0 ? `${open[open.length - 1]}: ${clean}` : clean);
    pending = '';
  };
  // htmlparser2 ends a declaration at its first `>`: the DTD's internal subset is dropped whole.
  const withoutDtd = xml.replace(/<!DOCTYPE[^[>]*(?:\[[^\]]*\][^>]*)?>/i, '');
  walkXml(withoutDtd, {
    open(name) {
      flush();
      open.push(localName(name));
    },
    text(text) {
      pending += text;
    },
    close() {
      flush();
      open.pop();
    },
  });
  flush();
  return lines.join('\n');
}
