// The recorder's listeners, added at the worker's top level (main.ts) so that their events wake a
// stopped worker: steps from the content script, the side panel's commands, and the recorded tab's
// navigations (a new document gets the content script again; one the user made is a navigate step).
import { isPanelCommand, isRecordedMessage, type PanelCommand, type RecorderState } from '../recorder/messages.js';
import type { TabRecorder } from './recording.js';

/** The extension's own pages (the side panel, also when opened as a tab), never a content script in a web page. */
function fromExtensionPage(sender: chrome.runtime.MessageSender): boolean {
  return sender.id === chrome.runtime.id && (sender.url ?? '').startsWith(chrome.runtime.getURL(''));
}

async function command(recorder: TabRecorder, c: PanelCommand): Promise<RecorderState> {
  await recorder.restored;
  switch (c.op) {
    case 'start':
      await recorder.start('panel', c.tabId, { title: c.title });
      break;
    case 'pause':
    case 'resume':
      recorder.pause(c.op === 'pause');
      break;
    case 'delete':
      recorder.delete(c.stepId);
      break;
    case 'stop':
      await recorder.stop();
      break;
  }
  return recorder.state();
}

export function routeRecorderMessages(recorder: TabRecorder): void {
  chrome.runtime.onMessage.addListener((message: unknown, sender, reply) => {
    if (isRecordedMessage(message) && sender.tab && !fromExtensionPage(sender)) {
      // A step can be what wakes a stopped worker: it waits for the recording to be restored.
      void recorder.restored.then(() => recorder.fromContent(message, sender));
      return false;
    }
    if (!isPanelCommand(message) || !fromExtensionPage(sender)) return false;
    command(recorder, message).then(reply, (err: Error) => reply({ ...recorder.state(), error: err.message }));
    return true;
  });
  // Web pages only: a new tab's about:blank is no page of the user's, and the extension may not enter it.
  chrome.webNavigation.onDOMContentLoaded.addListener(
    (d) => /^https?:/.test(d.url) && void recorder.restored.then(() => recorder.inject(d.tabId, d.frameId)),
  );
  chrome.webNavigation.onCommitted.addListener(
    (d) => d.frameId === 0 && void recorder.restored.then(() => recorder.navigated(d.tabId, d.url)),
  );
}
