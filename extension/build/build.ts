// npm run build:extension [-- --out DIR]: the unpacked extension in dist/extension/ (or DIR) and a zip
// of it beside it (dist/extension.zip). esbuild bundles the worker (ESM), the page engine (a script
// the worker evaluates in pages), the recorder's content script (src/recorder/page/, the same one
// otp-runner injects), the options page and the side panel; the frame validators are ajv's standalone code
// compiled here from the protocol's own schemas, since the worker may not compile code at run time.
import fs from 'node:fs';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { zipSync } from 'fflate';
import { validatorsSource } from './validators.js';

const root = path.resolve(import.meta.dirname, '..', '..');
const ext = path.join(root, 'extension');

function outDir(): string {
  const i = process.argv.indexOf('--out');
  return path.resolve(i >= 0 ? process.argv[i + 1]! : path.join(root, 'dist', 'extension'));
}

/** The two modules the build makes: the validators and the page engine's source. */
function virtualModules(engineSource: string): Plugin {
  return {
    name: 'otp-virtual',
    setup(b) {
      b.onResolve({ filter: /^otp:/ }, (args) => ({ path: args.path, namespace: 'otp' }));
      b.onLoad({ filter: /.*/, namespace: 'otp' }, (args) =>
        args.path === 'otp:validators'
          ? { contents: validatorsSource(), resolveDir: root, loader: 'js' }
          : { contents: `export default ${JSON.stringify(engineSource)};`, loader: 'js' },
      );
    },
  };
}

const common = { bundle: true, target: 'chrome125', legalComments: 'none', logLevel: 'warning' } as const;

async function engineSource(): Promise<string> {
  const out = await build({
    ...common,
    entryPoints: [path.join(ext, 'src/page/engine.ts')],
    format: 'iife',
    minify: true,
    write: false,
    metafile: true,
    absWorkingDir: root,
  });
  checkInputs(Object.keys(out.metafile.inputs));
  return out.outputFiles[0]!.text;
}

/** Every file under dir, as zip entries (paths with /). */
function entries(dir: string, prefix = ''): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) Object.assign(out, entries(full, `${prefix}${entry.name}/`));
    else out[`${prefix}${entry.name}`] = fs.readFileSync(full);
  }
  return out;
}

/** What the extension may bundle of src/: the protocol, and the recorder's page script and steps (not its Node bundler). */
const SHARED = ['src/otp/protocol/', 'src/recorder/page/', 'src/recorder/steps.ts'];

/**
 * The extension may use of the project the protocol and the recorder alone (docs/architecture.md): a
 * bundle holding any other file of src/ (the service's Ajv, its kernel) is refused, however it got there.
 */
function checkInputs(inputs: string[]): void {
  const foreign = inputs.filter((file) => file.startsWith('src/') && !SHARED.some((shared) => file.startsWith(shared)));
  if (foreign.length)
    throw new Error(`the extension's bundle may hold only ${SHARED.join(', ')} of src/, not: ${foreign.join(', ')}`);
}

/** The recorder's content script: a classic script (chrome.scripting injects files as scripts). */
async function buildContentScript(dir: string): Promise<void> {
  const out = await build({
    ...common,
    entryPoints: [path.join(ext, 'src/recorder/content.ts')],
    format: 'iife',
    minify: true,
    outfile: path.join(dir, 'recorder.js'),
    metafile: true,
    absWorkingDir: root,
  });
  checkInputs(Object.keys(out.metafile.inputs));
}

export async function buildExtension(dir = outDir()): Promise<string> {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const result = await build({
    ...common,
    entryPoints: {
      worker: path.join(ext, 'src/worker/main.ts'),
      options: path.join(ext, 'src/options/options.ts'),
      sidepanel: path.join(ext, 'src/panel/sidepanel.ts'),
    },
    format: 'esm',
    outdir: dir,
    metafile: true,
    absWorkingDir: root,
    plugins: [virtualModules(await engineSource())],
  });
  checkInputs(Object.keys(result.metafile.inputs));
  await buildContentScript(dir);
  for (const file of ['manifest.json', 'managed-schema.json'])
    fs.copyFileSync(path.join(ext, file), path.join(dir, file));
  fs.copyFileSync(path.join(ext, 'src/options/options.html'), path.join(dir, 'options.html'));
  fs.copyFileSync(path.join(ext, 'src/panel/sidepanel.html'), path.join(dir, 'sidepanel.html'));
  fs.writeFileSync(`${dir}.zip`, zipSync(entries(dir)));
  return dir;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  buildExtension().then(
    (dir) =>
      console.log(
        `extension built in ${path.relative(process.cwd(), dir) || dir} (and ${path.basename(dir)}.zip beside it)`,
      ),
    (err) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
