import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';

describe('Config: OTP_PUBLIC_URL', () => {
  it('is absent by default and kept without a trailing slash when set', () => {
    expect(loadConfig({}).otpPublicUrl).to.equal(undefined);
    expect(loadConfig({ OTP_PUBLIC_URL: 'wss://tests.example.com/otp/' }).otpPublicUrl).to.equal(
      'wss://tests.example.com/otp',
    );
  });

  it('refuses an address that is not ws:// or wss://, saying which setting', () => {
    expect(() => loadConfig({ OTP_PUBLIC_URL: 'https://tests.example.com/otp' })).to.throw(
      /OTP_PUBLIC_URL must be a URL of scheme ws or wss/,
    );
    expect(() => loadConfig({ OTP_PUBLIC_URL: 'not a url' })).to.throw(/OTP_PUBLIC_URL/);
  });
});
