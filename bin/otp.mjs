#!/usr/bin/env node
// otp: the service's command line for CI (src/cli/). Loads the TypeScript sources through tsx.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/index.ts');
process.exitCode = await main(process.argv.slice(2));
