// The extension's service worker. Every listener is added here, at the top level, so that the event
// wakes a stopped worker; then the session starts from the settings (and what a stopped worker left).
import { debuggerDetached, routeDebuggerEvents } from './cdp.js';
import { guardOfTab, knowUserTabs, syncRules, tabCreated, tabRemoved } from './guard.js';
import { routeRecorderMessages } from './recorder-wiring.js';
import { TabRecorder } from './recording.js';
import { ServiceRest } from './rest.js';
import { OtpSession } from './session.js';
import { onSettingsChanged, readSettings, type Settings } from './settings.js';
import { refreshToken } from './token-refresh.js';

const log = (line: string) => console.info(`[otp] ${line}`);
let settings: Settings = { allowEval: false, maxParallel: 1 };
let session: OtpSession | undefined;

const rest = new ServiceRest(
  () => settings.serviceUrl ?? session?.apiUrl,
  () => settings.token,
);

/** The recording of a tab of the user's (side panel or service), one at a time. */
const recorder = new TabRecorder({
  rest,
  send: (type, payload) => session?.send(type, {}, payload),
  log,
  // No panel open is no error: the state is sent again on its next change, and asked for on opening.
  show: (state) => void chrome.runtime.sendMessage(state).catch(() => {}),
});

/** Who waits for the next welcome (the tests, through otpExtension.welcomed()). */
const welcomeWaiters = new Set<(sessionId: string) => void>();
/** Runs this worker saw finish (run.finished), and who waits for one (the benchmark). */
const finishedRuns = new Set<string>();
const finishWaiters = new Map<string, () => void>();
/** Steps this worker began (`runId:stepIndex`), and who waits for one (the tests). */
const stepsStarted = new Set<string>();
const stepWaiters = new Map<string, () => void>();

function newSession(): OtpSession {
  const created = new OtpSession({
    settings: () => settings,
    rest,
    log,
    version: chrome.runtime.getManifest().version,
    capabilities: { record: true },
    onFrame: (frame) => recorder.onFrame(frame),
  });
  created.listeners.welcome.push((sessionId) => {
    for (const wake of welcomeWaiters) wake(sessionId);
    welcomeWaiters.clear();
  });
  created.listeners.step.push((runId, stepIndex) => {
    stepsStarted.add(`${runId}:${stepIndex}`);
    stepWaiters.get(`${runId}:${stepIndex}`)?.();
  });
  created.listeners.finished.push((runId) => {
    finishedRuns.add(runId);
    finishWaiters.get(runId)?.();
  });
  return created;
}

let starting: Promise<void> | undefined;
async function startSession(fresh: boolean): Promise<void> {
  settings = await readSettings();
  if (fresh && session) await session.stop();
  if (fresh || !session) {
    session = newSession();
    await session.start();
  }
}

/** Starts the session once per worker; settings changes start a new one. */
function ensureStarted(): Promise<void> {
  starting ??= (async () => {
    // A recording the service streams goes on with the resumed session: it must be back first.
    await recorder.restored;
    await knowUserTabs();
    await syncRules();
    await startSession(false);
  })();
  return starting;
}

routeDebuggerEvents();
onSettingsChanged(() => {
  void ensureStarted().then(() => startSession(true));
});
chrome.tabs.onCreated.addListener((tab) => tabCreated(tab));
routeRecorderMessages(recorder);
// The toolbar button opens the recorder's side panel.
chrome.sidePanel.setPanelBehavior({ openPanelOnActionClick: true }).catch(() => {});
chrome.tabs.onRemoved.addListener((tabId) => {
  tabRemoved(tabId);
  void recorder.restored.then(() => recorder.tabClosed(tabId));
  session?.runOfTab(tabId)?.tabClosed();
});
chrome.webNavigation.onCompleted.addListener((d) => d.frameId === 0 && guardOfTab(d.tabId)?.popupAnswered(d.tabId));
chrome.webNavigation.onErrorOccurred.addListener((d) => d.frameId === 0 && guardOfTab(d.tabId)?.popupAnswered(d.tabId));
chrome.webRequest.onErrorOccurred.addListener((d) => guardOfTab(d.tabId)?.requestFailed(d), { urls: ['<all_urls>'] });
// A stopped worker is woken by the alarm at least every 30 s, to reconnect (and resume) on its own.
chrome.alarms.create('otp-keepalive', { periodInMinutes: 0.5 });
chrome.alarms.onAlarm.addListener(() => {
  void ensureStarted().then(() => reconnect());
});

/** Connects again; first a fresh access token when the one signed in with is about to expire or was refused. */
async function reconnect(): Promise<void> {
  if (session?.connected) return;
  const refreshed = await refreshToken(settings, Boolean(session?.fatal)).catch((err: Error) => {
    log(`the access token could not be refreshed: ${err.message}; sign in again`);
    return false;
  });
  // A new token is a settings change, which starts a new session.
  if (!refreshed) session?.connect();
}
chrome.runtime.onStartup.addListener(() => void ensureStarted());
chrome.runtime.onInstalled.addListener(() => void ensureStarted());
void ensureStarted();

/** For the end-to-end tests, from the worker (pages cannot reach a worker's globals). */
(globalThis as unknown as { otpExtension: unknown }).otpExtension = {
  get session() {
    return session;
  },
  get settings() {
    return settings;
  },
  ready: () => ensureStarted(),
  recorder,
  /** Refreshes a signed-in token now (what a refused or expiring token gets on the next alarm). */
  refreshToken: () => refreshToken(settings, true),
  /** What chrome.debugger.onDetach does for a tab (the tests stand in for the user's Cancel on the bar). */
  debuggerDetached,
  /** Resolves when this worker begins the step (at once when it has): the steps before it are recorded. */
  stepStarted: (runId: string, stepIndex: number) =>
    stepsStarted.has(`${runId}:${stepIndex}`)
      ? Promise.resolve()
      : new Promise<void>((resolve) => stepWaiters.set(`${runId}:${stepIndex}`, resolve)),
  /** Resolves when the run's run.finished has come (at once when it has). */
  finished: (runId: string) =>
    finishedRuns.has(runId) ? Promise.resolve() : new Promise<void>((resolve) => finishWaiters.set(runId, resolve)),
  /** The session id once welcomed (at once when it is), other than `not` when given. */
  welcomed: (not?: string) => ensureStarted().then(() => welcomedSession(not)),
};

/** The current session's id once it is welcomed and not `not` (an earlier session). */
function welcomedSession(not?: string): Promise<string> {
  const id = session?.connected ? session.sessionId : undefined;
  if (id && id !== not) return Promise.resolve(id);
  return new Promise<void>((resolve) => welcomeWaiters.add(() => resolve())).then(() => welcomedSession(not));
}
