// The side panel: records the current tab (or the tab named by ?tab=, how the tests open it as a
// page), shows each step as it is recorded (its sentence and its locator candidates, best first),
// pauses, deletes a step, and stops and saves. The worker does the work (recording.ts); this page
// sends it commands and draws the state it answers and broadcasts.
import type { PanelCommand, RecorderState, ShownStep } from '../recorder/messages.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const title = $<HTMLInputElement>('title');
const record = $<HTMLButtonElement>('record');
const pause = $<HTMLButtonElement>('pause');
const stop = $<HTMLButtonElement>('stop');
const status = $<HTMLParagraphElement>('status');
const list = $<HTMLOListElement>('steps');

type Command = PanelCommand extends infer C ? (C extends PanelCommand ? Omit<C, 'kind'> : never) : never;

async function ask(command: Command): Promise<void> {
  const state = (await chrome.runtime.sendMessage({ kind: 'otp.panel', ...command })) as RecorderState | undefined;
  if (state) draw(state);
}

async function targetTab(): Promise<number | undefined> {
  const named = new URLSearchParams(location.search).get('tab');
  if (named) return Number(named);
  const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  return tab?.id;
}

function stepItem(step: ShownStep, deletable: boolean): HTMLLIElement {
  const li = document.createElement('li');
  li.dataset.action = step.action;
  const sentence = document.createElement('span');
  sentence.className = 'sentence';
  sentence.textContent = step.sentence;
  li.append(sentence);
  if (deletable) {
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.className = 'delete';
    remove.textContent = 'Delete';
    remove.setAttribute('aria-label', `Delete step ${step.id}: ${step.sentence}`);
    remove.addEventListener('click', () => void ask({ op: 'delete', stepId: step.id }));
    li.append(remove);
  }
  const candidates = document.createElement('ul');
  candidates.className = 'candidates';
  for (const c of step.candidates) {
    const item = document.createElement('li');
    const code = document.createElement('code');
    code.textContent = `${c.by}=${JSON.stringify(c.value)}${c.name ? ` name=${JSON.stringify(c.name)}` : ''}`;
    item.append(code);
    candidates.append(item);
  }
  li.append(candidates);
  return li;
}

function statusText(state: RecorderState): string {
  if (state.error) return `Not saved: ${state.error}`;
  if (state.status === 'saving') return 'Saving…';
  if (state.status === 'recording') {
    const by = state.mode === 'service' ? ' (started by the service)' : '';
    return `${state.paused ? 'Paused' : 'Recording'}${by}: ${state.steps.length} steps`;
  }
  if (state.saved?.testCaseId) return `Saved as test case ${state.saved.testCaseId}`;
  return state.saved ? 'Stopped: nothing was recorded' : 'Not recording';
}

function draw(state: RecorderState): void {
  const on = state.status !== 'idle';
  record.hidden = on;
  pause.hidden = !on;
  stop.hidden = !on;
  pause.textContent = state.paused ? 'Resume' : 'Pause';
  title.disabled = on;
  if (state.title) title.value = state.title;
  status.textContent = statusText(state);
  status.className = state.error ? 'error' : '';
  status.dataset.testCaseId = state.saved?.testCaseId ?? '';
  if (on || state.saved || state.error)
    list.replaceChildren(
      ...state.steps.map((s) => stepItem(s, state.status === 'recording' && state.mode === 'panel')),
    );
}

chrome.runtime.onMessage.addListener((message: unknown, sender) => {
  const state = message as RecorderState;
  if (sender.id === chrome.runtime.id && state?.kind === 'otp.recorder-state') draw(state);
});

record.addEventListener('click', async () => {
  const tabId = await targetTab();
  if (tabId === undefined) return void (status.textContent = 'No tab to record');
  await ask({ op: 'start', tabId, ...(title.value.trim() ? { title: title.value.trim() } : {}) });
});
pause.addEventListener('click', () => void ask({ op: pause.textContent === 'Pause' ? 'pause' : 'resume' }));
stop.addEventListener('click', () => void ask({ op: 'stop' }));
void ask({ op: 'state' });
