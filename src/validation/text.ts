// Text PostgreSQL cannot store: the NUL character (text and jsonb refuse U+0000) and UTF-16
// surrogates without their pair (they have no UTF-8 form). Such text is refused where input enters
// (the REST edge middleware and body parser, the OTP frame check), naming the field, so that no
// statement ever fails on it further in.
import { clip, type FieldError } from './field-errors.js';

/** String.prototype.isWellFormed (Node 20; the project's ES2022 lib does not declare it). */
type WellFormedCheck = string & { isWellFormed(): boolean };

/** What is wrong with `text` for storage, or undefined when PostgreSQL can store it. */
export function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'contains a NUL character (U+0000), which cannot be stored';
  if (!(text as WellFormedCheck).isWellFormed())
    return 'contains an unpaired UTF-16 surrogate, which is not valid Unicode text';
  return undefined;
}

/** Where a value sits: its parent's place and its key; the path is spelled only for the one reported. */
interface Place {
  parent?: Place;
  key: string | number;
}

/** `a.b[2]` under `prefix`, cut to a readable length. */
function spell(place: Place | undefined, prefix: string): string {
  const keys: Array<string | number> = [];
  for (let p = place; p; p = p.parent) keys.push(p.key);
  let out = prefix;
  for (const key of keys.reverse()) out = typeof key === 'number' ? `${out}[${key}]` : out ? `${out}.${key}` : key;
  return clip(out || '(root)', 200);
}

/**
 * The first string or object key in `value`, at any depth, that PostgreSQL cannot store, as a field
 * error under `prefix` (`body.steps[2].name`); undefined when there is none. Iterative: a deep value
 * cannot overflow the stack.
 */
export function unstorableText(value: unknown, prefix = ''): FieldError | undefined {
  const stack: Array<[unknown, Place | undefined]> = [[value, undefined]];
  while (stack.length) {
    const [v, place] = stack.pop()!;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) return { field: spell(place, prefix), message: problem };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], { parent: place, key: i }]);
    } else if (v !== null && typeof v === 'object') {
      const badKey = pushProperties(v, place, stack);
      // The key itself is the problem: name where it is, and say it is a key.
      if (badKey) return { field: spell(place, prefix), message: `has a property name that ${badKey}` };
    }
  }
  return undefined;
}

/** Pushes the members of `object` onto `stack` (the first on top, read next); at a key that cannot be stored, stops and says why. */
function pushProperties(
  object: object,
  place: Place | undefined,
  stack: Array<[unknown, Place | undefined]>,
): string | undefined {
  const entries = Object.entries(object);
  for (let i = entries.length - 1; i >= 0; i--) {
    const [key, item] = entries[i]!;
    const problem = textProblem(key);
    if (problem) return problem;
    stack.push([item, { parent: place, key }]);
  }
  return undefined;
}
