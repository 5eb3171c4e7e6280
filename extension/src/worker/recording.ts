// Recording in the user's own tab (docs/recording.md, docs/extension.md): the side panel starts it on
// a tab, or the service does over REST (record.start without ref). The worker injects the project's
// page recorder into every frame of that tab (content script, isolated world), takes each step only
// from that tab's frames, masks sensitive text as {{secret_N}} and shows the steps to the panel.
// Started in the panel, the steps stay here (the user may delete some) and become a test case with
// POST /otp/recordings when saved; started by the service, each goes at once as event.recorded and
// the service stops it (or the panel, with record.stop).
import type { OutboundMessage } from '../../../src/otp/protocol/schemas/messages.js';
import {
  candidatesOfStep,
  inFrame,
  type RecordedStep,
  SecretNumbers,
  stepSentence,
} from '../../../src/recorder/steps.js';
import type { RecordedMessage, RecorderState, ShownStep } from '../recorder/messages.js';
import type { ServiceRest } from './rest.js';

/** A navigation this soon after a recorded action is taken as its consequence, not a step of its own. */
const CAUSED_NAVIGATION_MS = 2_000;
/** How long stop waits for the steps the pages still hold (text being typed) to arrive. */
const SETTLE_MS = 3_000;

export interface RecordingDeps {
  rest: ServiceRest;
  /** Sends a frame on the current session (event.recorded, record.stop). */
  send(type: string, payload: unknown): void;
  log(line: string): void;
  /** Whoever shows the state (the side panel). */
  show(state: RecorderState): void;
}

interface Entry {
  id: number;
  step: RecordedStep;
  at: string;
}

interface Active {
  mode: 'panel' | 'service';
  tabId: number;
  title?: string;
  startUrl?: string;
  recordingId?: string;
  paused: boolean;
  saving: boolean;
  entries: Entry[];
  secrets: SecretNumbers;
  /** Per document, the last message seen (stop waits for each frame's last). */
  seen: Map<string, number>;
  lastActionAt: number;
}

/** What a stopped worker leaves of the recording (chrome.storage.session), so that the next one goes on. */
interface Saved {
  active?: Omit<Active, 'secrets' | 'seen'> & { secrets: Array<[string, number]>; seen: Array<[string, number]> };
  last: Pick<RecorderState, 'saved' | 'error'>;
  lastEntries: Entry[];
  nextId: number;
}

const SAVED_KEY = 'otpRecording';

export class TabRecorder {
  /** Resolves once what a stopped worker left is back: every event waits for it. */
  readonly restored: Promise<void>;
  private active?: Active;
  private last: Pick<RecorderState, 'saved' | 'error'> = {};
  /** The steps of the last recording, shown after it stopped. */
  private lastEntries: Entry[] = [];
  private nextId = 1;
  private readonly seenWaiters = new Set<() => void>();

  constructor(private readonly deps: RecordingDeps) {
    this.restored = this.restore().catch((err) => deps.log(`the recording could not be restored: ${String(err)}`));
  }

  private async restore(): Promise<void> {
    const saved = (await chrome.storage.session.get(SAVED_KEY))[SAVED_KEY] as Saved | undefined;
    if (!saved) return;
    this.last = saved.last;
    this.lastEntries = saved.lastEntries;
    this.nextId = saved.nextId;
    if (saved.active)
      this.active = {
        ...saved.active,
        // A save that was under way when the worker stopped is asked for again by the person.
        saving: false,
        secrets: new SecretNumbers(saved.active.secrets),
        seen: new Map(saved.active.seen),
      };
  }

  /** Kept in session storage at every change: a stopped worker loses no step. */
  private save(): void {
    const a = this.active;
    const saved: Saved = {
      ...(a ? { active: { ...a, secrets: a.secrets.toJSON(), seen: [...a.seen] } } : {}),
      last: this.last,
      lastEntries: this.lastEntries,
      nextId: this.nextId,
    };
    chrome.storage.session.set({ [SAVED_KEY]: saved }).catch((err) => this.deps.log(`recording not kept: ${err}`));
  }

  get tabId(): number | undefined {
    return this.active?.tabId;
  }

  state(): RecorderState {
    const a = this.active;
    const steps: ShownStep[] = (a?.entries ?? this.lastEntries).map((e) => ({
      id: e.id,
      action: e.step.otp.action,
      sentence: stepSentence(e.step),
      candidates: candidatesOfStep(e.step),
    }));
    if (!a) return { kind: 'otp.recorder-state', status: 'idle', paused: false, steps, ...this.last };
    return {
      kind: 'otp.recorder-state',
      status: a.saving ? 'saving' : 'recording',
      paused: a.paused,
      mode: a.mode,
      tabId: a.tabId,
      ...(a.title ? { title: a.title } : {}),
      ...(a.recordingId ? { recordingId: a.recordingId } : {}),
      steps,
    };
  }

  private changed(): void {
    this.save();
    this.deps.show(this.state());
  }

  /** Starts recording the tab (the panel's Record, or the service's record.start); its page is the first step. */
  async start(mode: Active['mode'], tabId: number, options: { title?: string; recordingId?: string; url?: string }) {
    if (this.active) throw new Error(`already recording tab ${this.active.tabId}`);
    const tab = await chrome.tabs.get(tabId);
    this.last = {};
    this.active = {
      mode,
      tabId,
      title: options.title,
      recordingId: options.recordingId,
      paused: false,
      saving: false,
      entries: [],
      secrets: new SecretNumbers(),
      seen: new Map(),
      lastActionAt: 0,
    };
    const startUrl = options.url ?? tab.url;
    if (startUrl && /^https?:/.test(startUrl)) {
      this.active.startUrl = startUrl;
      this.add({ otp: { action: 'navigate', url: startUrl } }, new Date().toISOString());
    }
    if (options.url) {
      // The service asked for this page: its navigation is the step above, not one of the user's.
      this.active.lastActionAt = Date.now();
      await chrome.tabs.update(tabId, { url: options.url });
    } else await this.inject(tabId);
    this.changed();
  }

  /** The recorder's content script into every frame of the tab (again after each navigation). */
  async inject(tabId: number, frameId?: number): Promise<void> {
    if (tabId !== this.active?.tabId) return;
    const target = frameId === undefined ? { tabId, allFrames: true } : { tabId, frameIds: [frameId] };
    await chrome.scripting
      .executeScript({ target, files: ['recorder.js'], injectImmediately: true })
      .catch((err) => this.deps.log(`the recorder could not enter a frame of tab ${tabId}: ${String(err)}`));
  }

  /** A step from a content script: taken only from the recorded tab, while not paused. */
  fromContent(message: RecordedMessage, sender: chrome.runtime.MessageSender): void {
    const a = this.active;
    if (!a || sender.id !== chrome.runtime.id || sender.tab?.id !== a.tabId) return;
    const { doc, seq, at, secret } = message.message;
    a.seen.set(doc, Math.max(seq, a.seen.get(doc) ?? 0));
    for (const wake of this.seenWaiters) wake();
    if (a.paused || a.saving) return;
    const step = message.message.step;
    if (secret !== undefined) a.secrets.mask(step, sender.url ?? '', secret);
    if (message.frame && sender.frameId) inFrame(step, message.frame);
    a.lastActionAt = Date.now();
    this.add(step, at);
    this.changed();
  }

  /** A navigation of the recorded tab's top frame that no recorded action caused: a navigate step. */
  navigated(tabId: number, url: string): void {
    const a = this.active;
    if (!a || tabId !== a.tabId || a.paused || a.saving || !/^https?:/.test(url)) return;
    if (Date.now() - a.lastActionAt < CAUSED_NAVIGATION_MS) return;
    this.add({ otp: { action: 'navigate', url } }, new Date().toISOString());
    this.changed();
  }

  private add(step: RecordedStep, at: string): void {
    const a = this.active!;
    a.entries.push({ id: this.nextId++, step, at });
    if (a.mode === 'service') this.deps.send('event.recorded', { recordingId: a.recordingId, step, at });
  }

  pause(paused: boolean): void {
    if (!this.active) return;
    this.active.paused = paused;
    this.changed();
  }

  /** Deletes a step the user does not want (a recording started in the panel: the service has none yet). */
  delete(stepId: number): void {
    const a = this.active;
    if (a?.mode !== 'panel') return;
    a.entries = a.entries.filter((e) => e.id !== stepId);
    this.changed();
  }

  /** Stop and save: what the pages still hold first, then the test case. */
  async stop(): Promise<void> {
    const a = this.active;
    if (!a || a.saving) return;
    await this.settle(a);
    a.saving = true;
    this.changed();
    if (a.mode === 'service') return this.deps.send('record.stop', { recordingId: a.recordingId });
    try {
      this.finish(await this.upload(a));
    } catch (err) {
      this.finish({}, (err as Error).message);
    }
  }

  private async upload(a: Active): Promise<{ testCaseId?: string }> {
    if (!a.entries.length) return {};
    const body = {
      format: 'otp',
      title: a.title || `Recorded ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`,
      description: `Recorded in the browser extension${a.startUrl ? ` from ${a.startUrl}` : ''}.`,
      ...(a.startUrl ? { startUrl: a.startUrl } : {}),
      labels: ['recorded'],
      steps: a.entries.map((e) => e.step),
    };
    const created = (await this.deps.rest.post('/otp/recordings', body)) as { id?: string };
    return { testCaseId: created.id };
  }

  private finish(saved: { testCaseId?: string; recordingId?: string }, error?: string): void {
    this.lastEntries = this.active?.entries ?? [];
    this.active = undefined;
    this.last = error ? { error } : { saved };
    this.deps.log(error ? `recording not saved: ${error}` : `recording saved: ${saved.testCaseId ?? 'no steps'}`);
    this.changed();
  }

  /** Flushes every frame of the tab and waits (a while) until each frame's last step has arrived. */
  private async settle(a: Active): Promise<void> {
    const results = await chrome.scripting
      .executeScript({
        target: { tabId: a.tabId, allFrames: true },
        func: () => (globalThis as { __otpRecorderFlush?: () => unknown }).__otpRecorderFlush?.() ?? null,
      })
      .catch(() => []);
    const marks = results
      .map((r) => r.result as { doc?: unknown; seq?: unknown } | null)
      .filter((m): m is { doc: string; seq: number } => typeof m?.doc === 'string' && typeof m.seq === 'number');
    const arrived = () => marks.every((m) => (a.seen.get(m.doc) ?? 0) >= m.seq);
    if (arrived()) return;
    await new Promise<void>((resolve) => {
      const check = () => arrived() && finish();
      const finish = () => {
        clearTimeout(timer);
        this.seenWaiters.delete(check);
        resolve();
      };
      const timer = setTimeout(finish, SETTLE_MS);
      this.seenWaiters.add(check);
    });
  }

  /** record.start and record.stop from the service (the session's onFrame seam); true when handled. */
  onFrame(frame: OutboundMessage): boolean {
    if (frame.type === 'record.start') {
      if (!frame.ref) void this.startedByService(frame.payload);
      return true;
    }
    if (frame.type === 'record.stop') {
      if (this.active?.mode === 'service' && frame.payload.recordingId === this.active.recordingId)
        this.finish({ recordingId: frame.payload.recordingId, testCaseId: frame.payload.testCaseId });
      return true;
    }
    return false;
  }

  private async startedByService(payload: { recordingId: string; title?: string; url?: string }): Promise<void> {
    try {
      const tab = payload.url
        ? await chrome.tabs.create({ url: 'about:blank', active: true })
        : (await chrome.tabs.query({ active: true, lastFocusedWindow: true }))[0];
      if (tab?.id === undefined) throw new Error('no tab to record');
      await this.start('service', tab.id, payload);
    } catch (err) {
      this.deps.log(`the service's recording ${payload.recordingId} could not start: ${(err as Error).message}`);
      this.deps.send('record.stop', { recordingId: payload.recordingId });
    }
  }

  /** The recorded tab was closed: the recording stops (and is saved). */
  tabClosed(tabId: number): void {
    if (tabId === this.active?.tabId) void this.stop();
  }
}
