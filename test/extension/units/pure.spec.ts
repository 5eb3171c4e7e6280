// The extension's pure modules, without a browser: how its settings combine, key chords as CDP key
// events, allowedOrigins as declarativeNetRequest patterns, the recorder's messages and sign-in's
// answer, the service's CORS rule for the extension's token requests, the steps said in words.
import { expect } from 'chai';
import { codeOf } from '../../../extension/src/options/sign-in-answer.js';
import { isPanelCommand, isRecordedMessage } from '../../../extension/src/recorder/messages.js';
import { keyDef, splitChord } from '../../../extension/src/worker/keys.js';
import { originPattern } from '../../../extension/src/worker/origin-patterns.js';
import { settingsOf } from '../../../extension/src/worker/settings-of.js';
import { corsAllowed } from '../../../src/oauth/provider.js';
import { stepSentence } from '../../../src/recorder/steps.js';

describe('extension: settings, keys and origin patterns', () => {
  it('takes managed (policy) settings over local ones, and ignores what is malformed', () => {
    expect(
      settingsOf({ serviceUrl: 'http://local:8080/', token: 'svc_pk_local', allowEval: true, maxParallel: 3 }, {}),
    ).to.deep.equal({
      serviceUrl: 'http://local:8080',
      token: 'svc_pk_local',
      otpUrl: undefined,
      allowEval: true,
      maxParallel: 3,
    });
    const both = settingsOf(
      { serviceUrl: 'http://local:8080', token: 'svc_pk_local', allowEval: true },
      { serviceUrl: 'https://tests.example.com', allowEval: false, otpUrl: 'wss://tests.example.com/otp' },
    );
    expect(both).to.deep.include({
      serviceUrl: 'https://tests.example.com',
      token: 'svc_pk_local',
      allowEval: false,
      otpUrl: 'wss://tests.example.com/otp',
    });
    expect(settingsOf({ maxParallel: 0, allowEval: 'yes', token: '  ' }, {})).to.deep.include({
      maxParallel: 1,
      allowEval: false,
      token: undefined,
    });
    expect(settingsOf({ maxParallel: 65 }, {}).maxParallel).to.equal(1);
  });

  it('turns key names and chords into the key events a US keyboard makes', () => {
    expect(keyDef('Enter')).to.deep.include({ key: 'Enter', code: 'Enter', keyCode: 13, text: '\r' });
    expect(keyDef('x')).to.deep.include({ key: 'x', code: 'KeyX', keyCode: 88, text: 'x' });
    expect(keyDef('G')).to.deep.include({ code: 'KeyG', keyCode: 71, text: 'G' });
    expect(keyDef('7')).to.deep.include({ code: 'Digit7', keyCode: 55 });
    expect(keyDef('?')).to.deep.include({ code: 'Slash', text: '?' });
    expect(keyDef('F5')).to.deep.include({ code: 'F5', keyCode: 116 });
    expect(keyDef('é'), 'typed as inserted text').to.equal(undefined);
    expect(splitChord('Control+Shift+A')).to.deep.equal({ modifiers: ['Control', 'Shift'], key: 'A' });
    expect(splitChord('Shift++')).to.deep.equal({ modifiers: ['Shift'], key: '+' });
    expect(splitChord('+')).to.deep.equal({ modifiers: [], key: '+' });
  });

  it('writes each allowed origin as a pattern of its URLs (default port optional, ws as http)', () => {
    const matches = (origin: string, url: string) => new RegExp(originPattern(origin)!).test(url);
    expect(matches('http://127.0.0.1:8080', 'http://127.0.0.1:8080/x?y')).to.equal(true);
    expect(matches('http://127.0.0.1:8080', 'ws://127.0.0.1:8080/socket')).to.equal(true);
    expect(matches('http://127.0.0.1:8080', 'http://127.0.0.1:8081/')).to.equal(false);
    expect(matches('http://127.0.0.1:8080', 'http://127.0.0.1:80800/')).to.equal(false);
    expect(matches('https://app.test', 'https://app.test/')).to.equal(true);
    expect(matches('https://app.test', 'wss://app.test:443/live')).to.equal(true);
    expect(matches('https://app.test', 'http://app.test/')).to.equal(false);
    expect(matches('https://app.test', 'https://app.test.evil.test/')).to.equal(false);
    expect(originPattern('ftp://files.test')).to.equal(undefined);
  });

  it('takes only well-formed recorder messages and panel commands', () => {
    const step = { otp: { action: 'click', locator: { by: 'css', value: '#a' } } };
    const message = { doc: 'd', seq: 1, at: '2026-11-26T10:00:00Z', step };
    expect(isRecordedMessage({ kind: 'otp.recorded', message })).to.equal(true);
    expect(isRecordedMessage({ kind: 'otp.recorded', message, frame: 'iframe[id="f"]' })).to.equal(true);
    expect(isRecordedMessage({ kind: 'otp.recorded', message: { ...message, seq: '1' } })).to.equal(false);
    expect(isRecordedMessage({ kind: 'otp.recorded', message: { ...message, step: { otp: {} } } })).to.equal(false);
    expect(isRecordedMessage({ kind: 'otp.recorded', message: { ...message, secret: 42 } })).to.equal(false);
    expect(isPanelCommand({ kind: 'otp.panel', op: 'start', tabId: 3, title: 'T' })).to.equal(true);
    expect(isPanelCommand({ kind: 'otp.panel', op: 'start', tabId: '3' })).to.equal(false);
    expect(isPanelCommand({ kind: 'otp.panel', op: 'delete', stepId: 2 })).to.equal(true);
    expect(isPanelCommand({ kind: 'otp.panel', op: 'run', stepId: 2 })).to.equal(false);
  });

  it('says recorded steps in words', () => {
    const role = { by: 'role', value: 'button', name: 'Sign in', exact: true };
    expect(
      stepSentence({ otp: { action: 'click', locator: { candidates: [role, { by: 'css', value: '#s' }] } } }),
    ).to.equal('Click the button “Sign in”');
    expect(
      stepSentence({ otp: { action: 'type', locator: { by: 'label', value: 'Email' }, text: '{{secret_1}}' } }),
    ).to.equal('Type “{{secret_1}}” into the field labelled “Email”');
    expect(stepSentence({ otp: { action: 'press', key: 'Enter' } })).to.equal('Press Enter');
    expect(stepSentence({ otp: { action: 'navigate', url: 'http://a.test/' } })).to.equal('Open http://a.test/');
  });

  it('reads the code of a sign-in answer only when its state is this sign-in’s', () => {
    const back = 'https://abcdefghijklmnopabcdefghijklmnop.chromiumapp.org/';
    expect(codeOf(`${back}?code=c0de&state=s1`, 's1')).to.equal('c0de');
    expect(() => codeOf(`${back}?code=c0de&state=other`, 's1')).to.throw('state differs');
    expect(() => codeOf(`${back}?error=access_denied&state=s1`, 's1')).to.throw('sign-in was refused');
    expect(() => codeOf(`${back}?state=s1`, 's1')).to.throw('no code');
  });

  it('lets the token endpoint answer an extension whose client redirects to its chromiumapp.org address, and no other page', () => {
    const id = 'abcdefghijklmnopabcdefghijklmnop';
    const redirects = [`https://${id}.chromiumapp.org/`];
    expect(corsAllowed(`chrome-extension://${id}`, 'none', redirects)).to.equal(true);
    expect(corsAllowed('chrome-extension://ponmlkjihgfedcbaponmlkjihgfedcba', 'none', redirects)).to.equal(false);
    expect(corsAllowed('https://evil.test', 'none', redirects)).to.equal(false);
    expect(corsAllowed(`chrome-extension://${id}`, 'client_secret_basic', redirects)).to.equal(false);
    expect(corsAllowed('http://127.0.0.1:3000', 'none', ['http://127.0.0.1:3000/cb'])).to.equal(true);
    expect(corsAllowed('null', 'none', ['http://127.0.0.1:3000/cb'])).to.equal(false);
  });
});
