import type { SearchHit } from '../search.model';

/**
 * What an optional step did: not asked for, done, or asked for but not possible (and why). The
 * response reports it as the string `off`, `applied` or `skipped: <reason>` (`describeOutcome`).
 */
export type StepOutcome<Reason extends string> = 'off' | 'applied' | { skipped: Reason };

/** A step's hits (its input unchanged unless `outcome` is `applied`) and what it did. */
export interface StepResult<Reason extends string> {
  hits: SearchHit[];
  outcome: StepOutcome<Reason>;
}

/** The response's form of an outcome: `off`, `applied` or `skipped: <reason>`. */
export function describeOutcome<Reason extends string>(
  outcome: StepOutcome<Reason>,
): 'off' | 'applied' | `skipped: ${Reason}` {
  return typeof outcome === 'string' ? outcome : `skipped: ${outcome.skipped}`;
}
