// Pure helpers over step actions: {{name}} variables and the capability an action needs.
import type { CapabilityName, StepAction } from './types.js';

/** `{{name}}`, optionally with blanks inside the braces: `{{ name }}`. */
const VAR_PATTERN = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

function fillString(text: string, vars: Readonly<Record<string, string>>): string {
  // One pass: a filled value is never scanned again, so a value containing {{x}} stays literal.
  return text.replace(VAR_PATTERN, (whole, name: string) =>
    Object.hasOwn(vars, name) ? String(vars[name]) : whole,
  );
}

function fillValue(value: unknown, vars: Readonly<Record<string, string>>): unknown {
  if (typeof value === 'string') return fillString(value, vars);
  if (Array.isArray(value)) return value.map((item) => fillValue(item, vars));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = fillValue(item, vars);
    return out;
  }
  return value;
}

/**
 * A copy of `action` with `{{name}}` replaced in every string value, at any depth (locators,
 * candidate arrays, ...). Keys are left alone; names missing from `vars` stay as written.
 * The input is never modified.
 */
export function fillVars(action: StepAction, vars: Readonly<Record<string, string>>): StepAction {
  return fillValue(action, vars) as StepAction;
}

function collect(value: unknown, into: Set<string>): void {
  if (typeof value === 'string') {
    for (const match of value.matchAll(VAR_PATTERN)) into.add(match[1]!);
  } else if (Array.isArray(value)) {
    for (const item of value) collect(item, into);
  } else if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) collect(item, into);
  }
}

/** The variable names an action uses, each once, in order of first appearance. */
export function referencedVars(action: StepAction): string[] {
  const names = new Set<string>();
  collect(action, names);
  return [...names];
}

/** The capability an executor must have to perform the action, or null when none is needed. */
export function requiredCapability(action: StepAction): CapabilityName | null {
  switch (action.action) {
    case 'eval':
      return 'eval';
    case 'screenshot':
      return 'screenshot';
    case 'upload':
      return 'upload';
    default:
      return null;
  }
}
