// The extension's pure modules, without a browser: how its settings combine, key chords as CDP key
// events, allowedOrigins as declarativeNetRequest patterns.
import { expect } from 'chai';
import { keyDef, splitChord } from '../../../extension/src/worker/keys.js';
import { originPattern } from '../../../extension/src/worker/origin-patterns.js';
import { settingsOf } from '../../../extension/src/worker/settings-of.js';

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
});
