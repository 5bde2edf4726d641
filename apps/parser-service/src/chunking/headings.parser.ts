/** A Markdown ATX heading (`## Title`) of the extracted text. */
export interface Heading {
  /** Where its line starts. */
  start: number;
  /** 1 for `#` … 6 for `######`. */
  level: number;
  text: string;
}

const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * The ATX headings of Markdown text in order, outside fenced code blocks (where `# ` is a shell or
 * Python comment). A closing `#` run is dropped; empty headings are ignored. Setext headings
 * (underlined with `===`) are not read.
 */
export function markdownHeadings(text: string): Heading[] {
  const headings: Heading[] = [];
  let fence: string | undefined;
  let start = 0;
  while (start <= text.length) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const line = text.slice(start, end).replace(/\r$/, '');
    const opener = FENCE.exec(line)?.[1];
    if (fence) {
      if (
        opener &&
        opener[0] === fence[0] &&
        opener.length >= fence.length &&
        !/\S/.test(line.slice(line.indexOf(opener) + opener.length))
      ) {
        fence = undefined;
      }
    } else if (opener) {
      fence = opener;
    } else {
      const match = ATX.exec(line);
      const title = (match?.[2] ?? '').replace(/(?:^|[ \t]+)#+$/, '').trim();
      if (match && title) headings.push({ start, level: match[1]!.length, text: title });
    }
    if (newline === -1) break;
    start = newline + 1;
  }
  return headings;
}

/**
 * Heading paths at offsets of the text: the headings in force there, outermost first. A heading
 * counts from the start of its line, so a chunk that starts with a heading is under it.
 */
export class HeadingPaths {
  private readonly starts: number[];
  private readonly paths: string[][];

  constructor(headings: Heading[]) {
    const stack: Heading[] = [];
    this.starts = headings.map((heading) => heading.start);
    this.paths = headings.map((heading) => {
      while (stack.length > 0 && stack[stack.length - 1]!.level >= heading.level) stack.pop();
      stack.push(heading);
      return stack.map((h) => h.text);
    });
  }

  at(offset: number): string[] {
    // The last heading starting at or before `offset` (binary search).
    let low = 0;
    let high = this.starts.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.starts[middle]! <= offset) low = middle + 1;
      else high = middle;
    }
    return low === 0 ? [] : [...this.paths[low - 1]!];
  }
}
