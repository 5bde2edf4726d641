import type { ChunkerConfig } from '@kb/contracts';

/**
 * Where source code splits well: after the end of a top-level definition, then after any block,
 * then at blank lines, lines and words. The recursive chunker keeps a separator at the end of the
 * piece before it, so every separator here is where a function or class *ends*: a closing brace
 * at the start of a line (brace languages), `end` (Ruby), two blank lines (PEP 8 puts them between
 * Python's top-level definitions).
 */
const BRACES = ['\n}\n\n', '\n}\n', '\n\n', '\n', ' ', ''];
const SEPARATORS: Record<string, string[]> = {
  python: ['\n\n\n', '\n\n', '\n', ' ', ''],
  ruby: ['\nend\n\n', '\nend\n', '\n\n', '\n', ' ', ''],
  typescript: BRACES,
  javascript: BRACES,
  java: BRACES,
  kotlin: BRACES,
  go: BRACES,
  rust: BRACES,
  c: BRACES,
  cpp: BRACES,
  csharp: BRACES,
  php: BRACES,
  swift: BRACES,
  scala: BRACES,
};

/**
 * The chunker for a source file: a recursive chunker that names no separators of its own splits
 * at the language's definition boundaries; any other chunker is used as configured.
 */
export function chunkerForCode(
  chunker: ChunkerConfig,
  language: string | undefined,
): ChunkerConfig {
  const separators = language ? SEPARATORS[language] : undefined;
  if (chunker.strategy !== 'recursive' || chunker.separators || !separators) return chunker;
  return { ...chunker, separators };
}
