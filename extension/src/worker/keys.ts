// Key names of `press` steps (Playwright's: "Enter", "x", "Control+A", "Shift+Tab") as the CDP key
// events a US keyboard makes: key, code, Windows key code and the text it types.

export interface KeyDef {
  key: string;
  code: string;
  keyCode: number;
  text?: string;
  location?: number;
}

const NAMED: Record<string, [code: string, keyCode: number, text?: string]> = {
  Enter: ['Enter', 13, '\r'],
  Tab: ['Tab', 9, '\t'],
  Backspace: ['Backspace', 8],
  Delete: ['Delete', 46],
  Escape: ['Escape', 27],
  ArrowUp: ['ArrowUp', 38],
  ArrowDown: ['ArrowDown', 40],
  ArrowLeft: ['ArrowLeft', 37],
  ArrowRight: ['ArrowRight', 39],
  Home: ['Home', 36],
  End: ['End', 35],
  PageUp: ['PageUp', 33],
  PageDown: ['PageDown', 34],
  Insert: ['Insert', 45],
  Space: ['Space', 32, ' '],
  ' ': ['Space', 32, ' '],
  Shift: ['ShiftLeft', 16],
  Control: ['ControlLeft', 17],
  Alt: ['AltLeft', 18],
  Meta: ['MetaLeft', 91],
  CapsLock: ['CapsLock', 20],
};

const PUNCTUATION: Record<string, [code: string, keyCode: number]> = {
  '-': ['Minus', 189],
  '=': ['Equal', 187],
  '[': ['BracketLeft', 219],
  ']': ['BracketRight', 221],
  '\\': ['Backslash', 220],
  ';': ['Semicolon', 186],
  "'": ['Quote', 222],
  ',': ['Comma', 188],
  '.': ['Period', 190],
  '/': ['Slash', 191],
  '`': ['Backquote', 192],
};
const SHIFTED = ')!@#$%^&*(';
const SHIFTED_PUNCTUATION: Record<string, string> = {
  _: '-',
  '+': '=',
  '{': '[',
  '}': ']',
  '|': '\\',
  ':': ';',
  '"': "'",
  '<': ',',
  '>': '.',
  '?': '/',
  '~': '`',
};

/** The key of a name, or undefined for a character no US key types (sent as inserted text instead). */
export function keyDef(name: string): KeyDef | undefined {
  const named = NAMED[name];
  if (named) return { key: name === 'Space' ? ' ' : name, code: named[0], keyCode: named[1], text: named[2] };
  const fn = /^F([1-9]|1[0-2])$/.exec(name);
  if (fn) return { key: name, code: name, keyCode: 111 + Number(fn[1]) };
  if (name.length !== 1) return undefined;
  if (/[a-z]/i.test(name))
    return { key: name, code: `Key${name.toUpperCase()}`, keyCode: name.toUpperCase().charCodeAt(0), text: name };
  if (/[0-9]/.test(name)) return { key: name, code: `Digit${name}`, keyCode: name.charCodeAt(0), text: name };
  if (SHIFTED.includes(name)) {
    const digit = String(SHIFTED.indexOf(name));
    return { key: name, code: `Digit${digit}`, keyCode: digit.charCodeAt(0), text: name };
  }
  const base = SHIFTED_PUNCTUATION[name] ?? name;
  const p = PUNCTUATION[base];
  return p ? { key: name, code: p[0], keyCode: p[1], text: name } : undefined;
}

/** CDP modifier bits. */
export const MODIFIER_BIT: Record<string, number> = { Alt: 1, Control: 2, Meta: 4, Shift: 8 };

/** "Control+Shift+A" -> the modifiers and the key pressed with them. */
export function splitChord(chord: string): { modifiers: string[]; key: string } {
  const parts = chord.split('+');
  // "+" itself, or a chord ending in "+": the last part is the key "+".
  const key = chord.endsWith('+') ? '+' : parts.pop()!;
  const modifiers = (chord.endsWith('+') ? parts.slice(0, -2) : parts).filter(Boolean);
  return { modifiers, key };
}
