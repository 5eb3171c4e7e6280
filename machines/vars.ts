// Pure helpers over step actions: {{name}} variables and the capability an action needs.
import type { CapabilityName, StepAction } from './types.js';

/** `{{name}}`, optionally with blanks inside the braces: `{{ name }}`. */
const VAR_PATTERN = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

function fillString(text: string, vars: Readonly<Record<string, string>>): string {
  if (!text.includes('{{')) return text;
  // One pass: a filled value is never scanned again, so a value containing {{x}} stays literal.
  return text.replace(VAR_PATTERN, (whole, name: string) => (Object.hasOwn(vars, name) ? String(vars[name]) : whole));
}

// Copy on write: a value with nothing to fill is answered as is (the same object), so a step without
// {{vars}} (nearly every one) costs no allocation each time it is sent. Values are never modified.
function fillValue(value: unknown, vars: Readonly<Record<string, string>>): unknown {
  if (typeof value === 'string') return fillString(value, vars);
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item, i) => {
      const filled = fillValue(item, vars);
      if (filled !== item) (out ??= value.slice())[i] = filled;
    });
    return out ?? value;
  }
  if (value !== null && typeof value === 'object') {
    let out: Record<string, unknown> | undefined;
    for (const key in value) {
      const item = (value as Record<string, unknown>)[key];
      const filled = fillValue(item, vars);
      if (filled !== item) (out ??= { ...value })[key] = filled;
    }
    return out ?? value;
  }
  return value;
}

/**
 * `action` with `{{name}}` replaced in every string value, at any depth (locators, candidate
 * arrays, ...): a copy where something was replaced, the action itself where nothing was. Keys are
 * left alone; names missing from `vars` stay as written. The input is never modified.
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
