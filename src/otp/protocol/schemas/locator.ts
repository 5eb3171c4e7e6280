// OTP locators: how an executor finds an element (docs/protocol.md). Plain JSON Schema objects, each
// with a short PascalCase $id; cross-references are written { $ref: 'Name' } so the same objects are
// registered by that name (src/validation/schema-registry.ts) and become /openapi.json components.
import type { FromSchema } from 'json-schema-to-ts';
import { present } from '../../../validation/present.js';
import type { JsonSchema } from '../../../validation/schema-registry.js';
import type { Assert, Equivalent } from '../../../validation/type-checks.js';

export type { JsonSchema };

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

/**
 * One way of finding an element. Written by hand because a locator nests through `within` and
 * FromSchema cannot follow a schema that refers to itself; LocatorAgreesWithSchema below checks it
 * against the schema one level deep (with `within` as this type).
 */
export interface Locator {
  by: LocatorStrategy;
  value: string;
  name?: string;
  exact?: boolean;
  nth?: number;
  within?: Locator;
  frame?: string;
}

/**
 * FromSchema options for schemas that `$ref` a locator: the reference becomes the hand-written type
 * (the referenced schemas are given as bare ids, so FromSchema does not descend into them).
 */
export type LocatorRefs = {
  references: [{ $id: 'Locator' }, { $id: 'LocatorOrCandidates' }, { $id: 'TriedLocator' }];
  deserialize: [
    { pattern: { $ref: 'Locator' }; output: Locator },
    { pattern: { $ref: 'LocatorOrCandidates' }; output: LocatorOrCandidates },
    { pattern: { $ref: 'TriedLocator' }; output: TriedLocator },
  ];
};

export const LocatorSchema = {
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
      description:
        'Selector text for the strategy: a test id, a role, a label, a CSS or XPath selector, ... May contain {{name}} variables.',
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
} as const satisfies JsonSchema;

/** Fails tsc when the Locator interface and its schema drift apart. */
export type LocatorAgreesWithSchema = Assert<Equivalent<Locator, FromSchema<typeof LocatorSchema, LocatorRefs>>>;

export const LocatorCandidatesSchema = {
  $id: 'LocatorCandidates',
  title: 'LocatorCandidates',
  description:
    'Several locators for the same element; the executor tries them in order and reports the one that worked in step.result usedLocator.',
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
} as const satisfies JsonSchema;

/** Several locators tried in order; the executor reports the one that matched in usedLocator. */
export type LocatorCandidates = FromSchema<typeof LocatorCandidatesSchema, LocatorRefs>;

/**
 * A locator or a list of candidate locators. Written as if/then/else rather than oneOf so that a bad
 * locator gets the errors of the form it was meant to be, not those of both forms.
 */
export const LocatorOrCandidatesSchema = {
  $id: 'LocatorOrCandidates',
  title: 'LocatorOrCandidates',
  description: 'A locator ({ by, value, ... }) or, when the object has candidates, a list of locators tried in order.',
  type: 'object',
  if: present('candidates'),
  then: { $ref: 'LocatorCandidates' },
  else: { $ref: 'Locator' },
} as const satisfies JsonSchema;

/** What a step's `locator` member accepts (by hand: FromSchema reads neither if/then/else nor recursion). */
export type LocatorOrCandidates = Locator | LocatorCandidates;

/**
 * A locator an executor tried, as step.result error.triedLocators lists it: the locator's own members
 * and, optionally, how many elements it matched (count). Additive: a plain Locator is a TriedLocator.
 */
export const TriedLocatorSchema = {
  $id: 'TriedLocator',
  title: 'TriedLocator',
  description: 'A locator the executor tried (its members as in Locator) and how many elements it matched (count).',
  type: 'object',
  properties: {
    ...LocatorSchema.properties,
    count: {
      description: 'How many elements the locator matched when it was tried (before nth).',
      type: 'integer',
      minimum: 0,
    },
    visible: {
      description: 'Optional: when it matched exactly one element, whether that element was visible.',
      type: 'boolean',
    },
    enabled: {
      description: 'Optional: when it matched exactly one element, whether that element was enabled.',
      type: 'boolean',
    },
  },
  required: ['by', 'value'],
  additionalProperties: false,
} as const satisfies JsonSchema;

/** A tried locator: the Locator and the number of elements it matched. */
export interface TriedLocator extends Locator {
  count?: number;
  visible?: boolean;
  enabled?: boolean;
}

export const locatorSchemas: readonly JsonSchema[] = [
  LocatorSchema,
  LocatorCandidatesSchema,
  LocatorOrCandidatesSchema,
  TriedLocatorSchema,
];
