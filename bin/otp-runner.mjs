#!/usr/bin/env node
// otp-runner: the reference OTP executor (src/runner/). Loads the TypeScript sources through tsx.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/runner/cli.ts');
process.exitCode = await main(process.argv.slice(2));
