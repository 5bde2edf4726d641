import { Parser as HtmlParser } from 'htmlparser2';

const BLOCK_TAGS = new Set([
  'p',
  'div',
  'section',
  'article',
  'li',
  'tr',
  'br',
  'table',
  'ul',
  'ol',
  'pre',
  'blockquote',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
]);
const SKIPPED_TAGS = new Set(['script', 'style', 'noscript', 'template', 'head']);

/**
 * Visible text of an HTML page with its structure kept as Markdown-like lines: headings become
 * `#` lines (so the heading-aware chunker sees them), blocks become paragraphs, scripts and styles
 * go. The <title> is returned apart.
 */
export function htmlToText(html: string): { text: string; title?: string } {
  const out: string[] = [];
  let skipping = 0;
  let inTitle = false;
  let title = '';
  const parser = new HtmlParser(
    {
      onopentag(name) {
        if (name === 'title') inTitle = true;
        else if (SKIPPED_TAGS.has(name)) skipping++;
        else if (/^h[1-6]$/.test(name)) out.push(`\n\n${'#'.repeat(Number(name[1]))} `);
        else if (BLOCK_TAGS.has(name)) out.push('\n\n');
      },
      ontext(text) {
        if (inTitle) title += text;
        else if (skipping === 0) out.push(text.replace(/\s+/g, ' '));
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        else if (SKIPPED_TAGS.has(name)) skipping = Math.max(0, skipping - 1);
        else if (BLOCK_TAGS.has(name)) out.push('\n\n');
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  const text = out
    .join('')
    .split('\n')
    .map((line) => line.trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  const cleanTitle = title.replace(/\s+/g, ' ').trim();
  return { text, ...(cleanTitle ? { title: cleanTitle } : {}) };
}
