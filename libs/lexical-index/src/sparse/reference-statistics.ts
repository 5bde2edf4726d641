/**
 * Corpus statistics fixed in advance, for scores that read no other chunk (docs/adr/0056): a
 * reference mean chunk length and each lexeme's inverse document frequency.
 */
export interface ReferenceStatistics {
  /** The mean chunk length, in lexemes, that chunk lengths are normalised against. */
  readonly avgdl: number;
  /** The lexeme's inverse document frequency (positive). */
  idf(lexeme: string): number;
}

/**
 * A table of idfs by lexeme, each held to one decimal, with one idf for every lexeme it lacks
 * (the rarest: a word the reference never saw is taken to be rare).
 */
export class IdfTable implements ReferenceStatistics {
  private readonly idfs = new Map<string, number>();

  /**
   * @param buckets lexemes by idf: `{ '6.2': 'lexeme lexeme …' }`, as the generator writes them
   *   (scripts/lexical/reference-idf.js).
   */
  constructor(
    buckets: Readonly<Record<string, string>>,
    readonly unknownIdf: number,
    readonly avgdl: number,
  ) {
    for (const [idf, lexemes] of Object.entries(buckets)) {
      const value = Number(idf);
      for (const lexeme of lexemes.split(' ')) if (lexeme) this.idfs.set(lexeme, value);
    }
  }

  get size(): number {
    return this.idfs.size;
  }

  idf(lexeme: string): number {
    return this.idfs.get(lexeme) ?? this.unknownIdf;
  }
}
