import type { LexicalConstraint } from './lexical-query.parser';

/**
 * A parsed query's constraint as a condition on the chunk row `c`, every text a bound parameter.
 * Words and phrases go through the same `english` configuration as the index (`c.tsv`); a word or
 * phrase of stop words only has no lexeme and constrains nothing (NULL, read as true at the top).
 * Identifiers must appear in the chunk's title or text as typed, case-insensitively.
 */
export function constraintToSql(constraint: LexicalConstraint, params: unknown[]): string {
  const node = (c: LexicalConstraint): string => {
    switch (c.kind) {
      case 'word':
      case 'phrase': {
        const fn = c.kind === 'word' ? 'plainto_tsquery' : 'phraseto_tsquery';
        const q = `${fn}('english', $${params.push(c.text)}::text)`;
        return `(CASE WHEN numnode(${q}) = 0 THEN NULL ELSE c.tsv @@ ${q} END)`;
      }
      case 'literal':
        return literalSql(c.text, params);
      case 'and':
        return `(${c.items.map(node).join(' AND ')})`;
      case 'or':
        return `(${c.items.map(node).join(' OR ')})`;
      case 'not':
        return `(NOT ${node(c.item)})`;
    }
  };
  return `coalesce(${node(constraint)}, TRUE)`;
}

/** Whether the chunk row `c` holds the text as typed in its title or text, case-insensitively. */
export function literalSql(text: string, params: unknown[]): string {
  return `(strpos(lower(c.title || E'\\n' || c.text), lower($${params.push(text)}::text)) > 0)`;
}
