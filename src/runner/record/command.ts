// `otp-runner record`: opens a browser on a start page and sends each user action as event.recorded;
// Ctrl-C or closing the browser stops the recording and prints the test case made from it.
import { parseArgs } from 'node:util';
import { recorderEnvironment } from '../options.js';
import { startRecorder } from './recorder.js';

const USAGE = `Usage: otp-runner record [--server ws://HOST:8081/otp] --key <write key> --url <start page>
                         [--name NAME] [--title TITLE] [--chromium PATH] [--headed | --headless] [--wait]

Records what you do in the browser as a test case (docs/recording.md).
  --server    the service's OTP address (or OTP_SERVER; default ws://127.0.0.1:8081/otp)
  --key       an API key with scope write (or OTP_KEY)
  --url       the page to start on (its navigate is the first step)
  --title     title of the recording and of its test case
  --name      executor name shown in GET /api/v1/otp/sessions
  --chromium  Chromium or Chrome executable (default: a system one, else the npm-shipped one)
  --headed / --headless   default: headed when a display exists
  --wait      do not start a recording; wait for one started over REST
              (POST /api/v1/otp/sessions/:id/recordings)
Stop with Ctrl-C or by closing the browser: the test case id is printed.`;

export async function recordCommand(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        server: { type: 'string' },
        key: { type: 'string' },
        url: { type: 'string' },
        title: { type: 'string' },
        name: { type: 'string' },
        chromium: { type: 'string' },
        headed: { type: 'boolean' },
        headless: { type: 'boolean' },
        wait: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const env = recorderEnvironment();
  const server = values.server ?? env.server;
  const key = values.key ?? env.key;
  const missing = [!key && '--key', !values.url && !values.wait && '--url (or --wait)'].filter(Boolean);
  if (missing.length) {
    process.stderr.write(`missing ${missing.join(', ')}\n\n${USAGE}\n`);
    return 2;
  }
  const say = (line: string) => process.stderr.write(`${line}\n`);
  let recorder;
  try {
    recorder = await startRecorder({
      server,
      key: key!,
      url: values.url,
      title: values.title,
      name: values.name,
      chromium: values.chromium,
      headed: values.headless ? false : (values.headed ?? env.hasDisplay),
      wait: values.wait,
      log: say,
    });
  } catch (err) {
    say(`otp-runner record: ${(err as Error).message}`);
    return 1;
  }
  // The handlers go in before the line that invites Ctrl-C: a SIGINT right after it must stop the recording.
  const onSignal = () => void recorder.stop('interrupted');
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  say(
    `Recording ${recorder.recordingId} on session ${recorder.sessionId}. Act in the browser; Ctrl-C or close the browser to stop.`,
  );
  const result = await recorder.done;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  if (result.testCaseId) {
    say(`Stopped (${result.reason}): ${result.steps} steps.`);
    process.stdout.write(`${result.testCaseId}\n`);
    return 0;
  }
  say(`Stopped (${result.reason}): no test case was made${result.steps ? '' : ' (nothing was recorded)'}.`);
  return result.steps ? 1 : 0;
}
