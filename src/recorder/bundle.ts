// The runner's page script, bundled from this folder's TypeScript by esbuild once per process: the
// same modules the extension's build bundles into its content script (one source, no copy). In the
// source tree the entry is runner-entry.ts; in `npm run build`'s dist/ it is tsc's runner-entry.js.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

let bundled: Promise<string> | undefined;

function entry(): string {
  const ts = fileURLToPath(new URL('./page/runner-entry.ts', import.meta.url));
  return fs.existsSync(ts) ? ts : fileURLToPath(new URL('./page/runner-entry.js', import.meta.url));
}

/** The page script's source: an IIFE that installs the recorder in the document it runs in. */
export function runnerPageScript(): Promise<string> {
  bundled ??= build({
    entryPoints: [entry()],
    bundle: true,
    format: 'iife',
    target: 'chrome110',
    write: false,
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
  }).then((out) => out.outputFiles[0]!.text);
  return bundled;
}
