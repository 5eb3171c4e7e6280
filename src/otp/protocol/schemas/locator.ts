// OTP locators (spec 2.4): how an executor finds an element. Plain JSON Schema objects, each with a
// short PascalCase $id; cross-references are written { $ref: 'Name' } so the same objects can be put
// under components/schemas of an OpenAPI 3.1 document by rewriting the $ref (see index.ts).

/** A JSON Schema object as this project writes them: plain data, no functions. */
export type JsonSchema = Record<string, unknown>;

export const LOCATOR_STRATEGIES = [
  'testid',
  'role',
  'label',
  'placeholder',
  'text',
  'alt',
  'title',
  'css',
  'xpath',
] as const;
export type LocatorStrategy = (typeof LOCATOR_STRATEGIES)[number];

/** One way of finding an element. */
export interface Locator {
  by: LocatorStrategy;
  value: string;
  name?: string;
  exact?: boolean;
  nth?: number;
  within?: Locator;
  frame?: string;
}

/** Several locators tried in order; the executor reports the one that matched in usedLocator. */
export interface LocatorCandidates {
  candidates: Locator[];
}

/** What a step's `locator` member accepts. */
export type LocatorOrCandidates = Locator | LocatorCandidates;

export const LocatorSchema: JsonSchema = {
  $id: 'Locator',
  title: 'Locator',
  description: 'One way of finding an element: a strategy (by) and its selector text (value), with optional filters.',
  type: 'object',
  properties: {
    by: {
      description: 'Locator strategy.',
      enum: [...LOCATOR_STRATEGIES],
    },
    value: {
      description: 'Selector text for the strategy: a test id, a role, a label, a CSS or XPath selector, ... May contain {{name}} variables.',
      type: 'string',
    },
    name: {
      description: 'Accessible-name filter, used with by=role.',
      type: 'string',
    },
    exact: {
      description: 'Match the text exactly (case and whole string) instead of as a substring.',
      type: 'boolean',
    },
    nth: {
      description: 'Zero-based index among the elements that match.',
      type: 'integer',
      minimum: 0,
    },
    within: {
      $ref: 'Locator',
      description: 'Parent element to search inside (itself a locator, which may have its own within).',
    },
    frame: {
      description: 'Selector of the frame (iframe) that holds the element.',
      type: 'string',
    },
  },
  required: ['by', 'value'],
  additionalProperties: false,
};

export const LocatorCandidatesSchema: JsonSchema = {
  $id: 'LocatorCandidates',
  title: 'LocatorCandidates',
  description: 'Several locators for the same element; the executor tries them in order and reports the one that worked in step.result usedLocator.',
  type: 'object',
  properties: {
    candidates: {
      description: 'Locators to try, in order.',
      type: 'array',
      minItems: 1,
      items: { $ref: 'Locator' },
    },
  },
  required: ['candidates'],
  additionalProperties: false,
};

/**
 * A locator or a list of candidate locators. Written as if/then/else rather than oneOf so that a bad
 * locator gets the errors of the form it was meant to be, not those of both forms.
 */
export const LocatorOrCandidatesSchema: JsonSchema = {
  $id: 'LocatorOrCandidates',
  title: 'LocatorOrCandidates',
  description: 'A locator ({ by, value, ... }) or, when the object has candidates, a list of locators tried in order.',
  type: 'object',
  if: { required: ['candidates'] },
  then: { $ref: 'LocatorCandidates' },
  else: { $ref: 'Locator' },
};

export const locatorSchemas: readonly JsonSchema[] = [LocatorSchema, LocatorCandidatesSchema, LocatorOrCandidatesSchema];
