/**
 * The deterministic half of conversation-aware retrieval (docs/adr/0022): whether a question is a
 * follow-up of the conversation, and if so a standalone query made of it and the topic of the
 * earlier user turns. No model: the same conversation always gives the same query.
 */

/** Words that point back at something said before. */
const PRONOUNS = new Set([
  'it',
  'its',
  'itself',
  'this',
  'that',
  'these',
  'those',
  'they',
  'them',
  'their',
  'theirs',
  'he',
  'him',
  'his',
  'she',
  'her',
  'there',
  'such',
]);

/** Openings that continue the previous question instead of asking a new one. */
const CONTINUATIONS = [
  /^(and|but|also|or|so|then|plus)\b/,
  /^(what|how) about\b/,
  /^same (for|with)\b/,
  /^(\.\.\.|…)/,
];

/** A question this short after a longer one leans on it ("why?", "which version?"). */
const SHORT_WORDS = 4;

/** Function words and question words: never a topic. */
const STOP_WORDS = new Set([
  ...PRONOUNS,
  ...'a an the of to in on at by for from with about into over under as and or but not no nor so then than too very can could should would will shall may might must do does did done is are was were be been being have has had having i me my we our you your what which who whom whose when where why how also just only more most some any all each every other else please tell show explain describe give me there here if whether get got use used using make made one ones thing things way'.split(
    ' ',
  ),
]);

const words = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}_'-]+/gu) ?? [];

/** The content words of a turn, in order, once each: what it is about. */
export function topicWords(text: string): string[] {
  return [...new Set(words(text).filter((w) => w.length > 1 && !STOP_WORDS.has(w)))];
}

/** Whether `question` reads as a follow-up of `previous` (the user turn before it). */
export function isFollowUp(question: string, previous: string | undefined): boolean {
  if (previous === undefined) return false;
  const lower = question.trim().toLowerCase();
  if (CONTINUATIONS.some((p) => p.test(lower))) return true;
  if (words(lower).some((w) => PRONOUNS.has(w))) return true;
  const count = words(lower).length;
  return count <= SHORT_WORDS && words(previous).length > count;
}

export interface RuleRewrite {
  followUp: boolean;
  /** The question itself, or with the conversation's topic added. */
  query: string;
}

/**
 * The topic is the content words of the latest user turn that was not itself a follow-up (a
 * follow-up keeps the topic it continued); a follow-up question is searched with those of its
 * topic words it does not already have, after it: "and how is it cached?" following "How does
 * the query service embed a question?" → "how is it cached? (query service embed question)".
 */
export function rewriteByRule(question: string, earlierUserTurns: string[]): RuleRewrite {
  let topic: string[] = [];
  let previous: string | undefined;
  for (const turn of earlierUserTurns) {
    if (!isFollowUp(turn, previous) || topic.length === 0) topic = topicWords(turn);
    previous = turn;
  }
  if (!isFollowUp(question, previous) || topic.length === 0) {
    return { followUp: false, query: question };
  }
  const own = new Set(topicWords(question));
  const added = topic.filter((w) => !own.has(w));
  const stripped = question
    .trim()
    .replace(/^(and|but|also|or|so|then|plus)\b[\s,]*|^(\.\.\.|…)\s*/i, '');
  return {
    followUp: true,
    query: added.length > 0 ? `${stripped} (${added.join(' ')})` : stripped,
  };
}
