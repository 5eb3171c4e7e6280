// Trusted input through the debugger (Input.dispatchMouseEvent, dispatchKeyEvent, insertText): the
// page sees the events a user's mouse and keyboard make.
import type { Cdp } from './cdp.js';
import { keyDef, MODIFIER_BIT, splitChord } from './keys.js';

export type Button = 'left' | 'right';

const bits = (modifiers: readonly string[]) => modifiers.reduce((sum, m) => sum | (MODIFIER_BIT[m] ?? 0), 0);

async function modifierKeys(cdp: Cdp, modifiers: readonly string[], type: 'rawKeyDown' | 'keyUp'): Promise<void> {
  const held: string[] = [];
  for (const name of type === 'keyUp' ? [...modifiers].reverse() : modifiers) {
    const def = keyDef(name);
    if (!def) continue;
    held.push(name);
    await cdp.send('Input.dispatchKeyEvent', {
      type,
      key: def.key,
      code: def.code,
      windowsVirtualKeyCode: def.keyCode,
      modifiers: bits(type === 'keyUp' ? modifiers.filter((m) => !held.includes(m)) : held),
    });
  }
}

export async function click(
  cdp: Cdp,
  point: { x: number; y: number },
  options: { button?: Button; clickCount?: number; modifiers?: readonly string[] } = {},
): Promise<void> {
  const { x, y } = point;
  const button = options.button ?? 'left';
  const modifiers = options.modifiers ?? [];
  const m = bits(modifiers);
  await modifierKeys(cdp, modifiers, 'rawKeyDown');
  await cdp.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x, y, modifiers: m });
  for (let count = 1; count <= (options.clickCount ?? 1); count++) {
    const buttons = button === 'left' ? 1 : 2;
    await cdp.send('Input.dispatchMouseEvent', {
      type: 'mousePressed',
      x,
      y,
      button,
      buttons,
      clickCount: count,
      modifiers: m,
    });
    await cdp.send('Input.dispatchMouseEvent', {
      type: 'mouseReleased',
      x,
      y,
      button,
      buttons: 0,
      clickCount: count,
      modifiers: m,
    });
  }
  await modifierKeys(cdp, modifiers, 'keyUp');
}

export async function hover(cdp: Cdp, point: { x: number; y: number }): Promise<void> {
  await cdp.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: point.x, y: point.y });
}

/** One key chord ("Enter", "Control+A"): the modifiers down, the key down and up, the modifiers up. */
export async function press(cdp: Cdp, chord: string): Promise<void> {
  const { modifiers, key } = splitChord(chord);
  const def = keyDef(key);
  if (!def) throw new Error(`Unknown key: "${key}"`);
  const m = bits(modifiers);
  // With Control, Alt or Meta held a key types no text (a shortcut).
  const text = m & ~MODIFIER_BIT.Shift! ? undefined : def.text;
  await modifierKeys(cdp, modifiers, 'rawKeyDown');
  const base = { key: def.key, code: def.code, windowsVirtualKeyCode: def.keyCode, modifiers: m };
  await cdp.send('Input.dispatchKeyEvent', {
    ...base,
    type: text ? 'keyDown' : 'rawKeyDown',
    text,
    unmodifiedText: text,
  });
  await cdp.send('Input.dispatchKeyEvent', { ...base, type: 'keyUp' });
  await modifierKeys(cdp, modifiers, 'keyUp');
}

/** Types text key by key (a character no US key types is inserted as text), delayMs between keys. */
export async function typeText(cdp: Cdp, text: string, delayMs = 0): Promise<void> {
  for (const char of text) {
    if (keyDef(char) && char !== '\n') await press(cdp, char);
    else await cdp.send('Input.insertText', { text: char });
    if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
}
