import { type RawBuilder, sql } from 'kysely';

import type { LexicalConstraint } from './lexical-query.parser';

/**
 * A parsed query's constraint as a condition on the chunk row `c`, every text a bound parameter.
 * Words and phrases go through the same `english` configuration as the index (`c.tsv`); a word or
 * phrase of stop words only has no lexeme and constrains nothing (NULL, read as true at the top).
 * Identifiers must appear in the chunk's title or text as typed, case-insensitively.
 */
export function constraintToSql(constraint: LexicalConstraint): RawBuilder<boolean> {
  const node = (c: LexicalConstraint): RawBuilder<boolean> => {
    switch (c.kind) {
      case 'word':
      case 'phrase': {
        const fn = sql.raw(c.kind === 'word' ? 'plainto_tsquery' : 'phraseto_tsquery');
        const q = sql`${fn}('english', ${c.text}::text)`;
        return sql`(CASE WHEN numnode(${q}) = 0 THEN NULL ELSE c.tsv @@ ${q} END)`;
      }
      case 'literal':
        return literalSql(c.text);
      case 'and':
        return sql`(${sql.join(c.items.map(node), sql` AND `)})`;
      case 'or':
        return sql`(${sql.join(c.items.map(node), sql` OR `)})`;
      case 'not':
        return sql`(NOT ${node(c.item)})`;
    }
  };
  return sql`coalesce(${node(constraint)}, TRUE)`;
}

/** Whether the chunk row `c` holds the text as typed in its title or text, case-insensitively. */
export function literalSql(text: string): RawBuilder<boolean> {
  return sql`(strpos(lower(c.title || E'\\n' || c.text), lower(${text}::text)) > 0)`;
}
