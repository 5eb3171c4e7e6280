// The rooms of docs/architecture.md, checked. The rules (test/support/architecture/rules.ts) are
// functions over source files; each runs once over the real tree, which must keep it, and once over
// the tree with a planted violation, which it must refuse: a rule that cannot fail is no rule.

import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { documentedOwners, documentedRooms } from './support/architecture/doc.js';
import { KNOWN_FILE_CIRCLES, MAY_IMPORT, TABLE_OWNERS } from './support/architecture/layout.js';
import * as rules from './support/architecture/rules.js';
import { readTree, ready, type Source, sourceOf } from './support/architecture/sources.js';

const root = path.resolve(import.meta.dirname, '..');
let tree: Source[] = [];

/** The real tree with `files` added, or put in place of the files of the same paths. */
function planted(files: Record<string, string>): Source[] {
  return [...tree.filter((f) => !(f.rel in files)), ...Object.entries(files).map(([rel, text]) => sourceOf(rel, text))];
}

type Rule = (files: Source[]) => string[];

/** A rule: the real tree keeps it; each planted tree breaks it with exactly the offences listed. */
function rule(title: string, check: Rule, plants: Array<[string, Record<string, string>, string[]]>) {
  describe(title, () => {
    it('holds in the tree', () => expect(check(tree)).to.deep.equal([]));
    for (const [what, files, offences] of plants) {
      it(`fails on ${what}`, () => expect(check(planted(files))).to.deep.equal(offences));
    }
  });
}

describe('Architecture', () => {
  before(async () => {
    await ready();
    tree = readTree(root);
  });

  it('reads src/, machines/ and db/, TypeScript and JavaScript', () => {
    const rels = tree.map((f) => f.rel);
    for (const rel of [
      'extension/src/worker/main.ts',
      'src/service.ts',
      'machines/types.ts',
      'db/migrations/001_init.ts',
      'src/console/static/inspect.js',
    ])
      expect(rels).to.include(rel);
  });

  rule('every file of src/ is in a room', rules.unknownRooms, [
    [
      'a folder that is no room',
      { 'src/widgets/summary.ts': 'export const x = 1;\n' },
      ['src/widgets/summary.ts: in no room'],
    ],
  ]);

  rule('a room imports only the rooms it may, and only types where it may import only types', rules.importOffences, [
    [
      'a dynamic import()',
      {
        'src/auth/lazy.ts':
          "export async function load() {\n  return (await import('../otp/store/run-store.js')).RunStore;\n}\n",
      },
      ["src/auth/lazy.ts: import('../otp/store/run-store.js') (auth may not import otp/store)"],
    ],
    [
      'a bare import',
      { 'src/validation/side-effect.ts': "import '../rest/app.js';\n" },
      ["src/validation/side-effect.ts: import '../rest/app.js' (validation may not import rest)"],
    ],
    [
      'a type-only import of a room it may not import',
      {
        'src/rest/run-types.ts':
          "import type { RunView } from '../otp/store/run-views.js';\nexport type View = RunView;\n",
      },
      [
        "src/rest/run-types.ts: import type { RunView } from '../otp/store/run-views.js' (rest may not import otp/store)",
      ],
    ],
    [
      'a value import where only types may be imported',
      {
        'src/observability/labels.ts':
          "import { eventLabel } from '../otp/engine/run-driver.js';\nexport const label = eventLabel;\n",
      },
      [
        "src/observability/labels.ts: import { eventLabel } from '../otp/engine/run-driver.js' (observability may import only types of otp/engine (import type))",
      ],
    ],
    [
      'a re-export',
      { 'src/db/keys.ts': "export * from '../auth/keys.js';\n" },
      ["src/db/keys.ts: export * from '../auth/keys.js' (db may not import auth)"],
    ],
    [
      'a migration importing a room',
      {
        'db/migrations/012_backfill.ts':
          "import { RunStore } from '../../src/otp/store/run-store.js';\nexport const store = RunStore;\n",
      },
      [
        "db/migrations/012_backfill.ts: import { RunStore } from '../../src/otp/store/run-store.js' (db may not import otp/store)",
      ],
    ],
    [
      'a .js file',
      {
        'src/console/static/extra.js':
          "import { RunStore } from '../../otp/store/run-store.js';\nexport default RunStore;\n",
      },
      [
        "src/console/static/extra.js: import { RunStore } from '../../otp/store/run-store.js' (console may import only types of otp/store (import type))",
      ],
    ],
    [
      'machines/ importing a package other than xstate',
      { 'machines/clock.ts': "import { setTimeout } from 'node:timers/promises';\nexport const wait = setTimeout;\n" },
      ["machines/clock.ts: import { setTimeout } from 'node:timers/promises' (machines/ imports only xstate)"],
    ],
    [
      'machines/ importing a file of src/, even of the kernel',
      {
        'machines/limits.ts':
          "import { loadConfig } from '../src/config.js';\nimport type { Logger } from '../src/log.js';\nexport const load = loadConfig;\nexport type L = Logger;\n",
      },
      [
        "machines/limits.ts: import { loadConfig } from '../src/config.js' (machines/ imports only its own files and xstate)",
        "machines/limits.ts: import type { Logger } from '../src/log.js' (machines/ imports only its own files and xstate)",
      ],
    ],
    [
      'import() of a computed module',
      {
        'src/rest/plugins.ts':
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the planted source holds a template literal
          'export const load = (name: string) => import(name);\nexport const room = (name: string) => import(`../otp/${name}/index.js`);\n',
      },
      [
        'src/rest/plugins.ts: import(name) (import() of a computed module cannot be checked)',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the planted import's text, as the test reports it
        'src/rest/plugins.ts: import(`../otp/${name}/index.js`) (import() of a computed module cannot be checked)',
      ],
    ],
    [
      'the runner importing the kernel',
      { 'src/runner/settings.ts': "import { loadConfig } from '../config.js';\nexport const load = loadConfig;\n" },
      ["src/runner/settings.ts: import { loadConfig } from '../config.js' (runner may not import the kernel)"],
    ],
    [
      'the extension importing a room other than the protocol, and the kernel',
      {
        'extension/src/worker/checks.ts':
          "import { ajv } from '../../../src/validation/ajv.js';\nimport { newId } from '../../../src/ids.js';\nexport const a = [ajv, newId];\n",
        'extension/src/page/reads.ts':
          "import type { RunView } from '../../../src/otp/store/run-views.js';\nexport type V = RunView;\n",
      },
      [
        "extension/src/worker/checks.ts: import { ajv } from '../../../src/validation/ajv.js' (extension may not import validation)",
        "extension/src/worker/checks.ts: import { newId } from '../../../src/ids.js' (extension may not import the kernel)",
        "extension/src/page/reads.ts: import type { RunView } from '../../../src/otp/store/run-views.js' (extension may not import otp/store)",
      ],
    ],
    [
      'the composition root importing the runner',
      { 'src/main.ts': `${fs.readFileSync(path.join(root, 'src/main.ts'), 'utf8')}\nimport './runner/index.js';\n` },
      ["src/main.ts: import './runner/index.js' (the composition root may not import runner)"],
    ],
  ]);

  rule('the rooms form no circle (type-only imports count)', rules.roomCycles, [
    [
      'a room importing one that imports it',
      { 'src/db/principal.ts': "import type { Principal } from '../auth/principal.js';\nexport type P = Principal;\n" },
      ['rooms in a circle: auth, db'],
    ],
  ]);

  rule('files form no circle, but the known ones (type-only imports count)', rules.fileCircles, [
    [
      'two files importing each other',
      {
        'src/rest/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
        'src/rest/b.ts': "import type { A } from './a.js';\nexport const b = 1;\nexport type B = A;\n",
      },
      ['files in a circle: src/rest/a.ts <-> src/rest/b.ts'],
    ],
  ]);

  it('files form no circle: fails when a known circle is gone, so that its entry goes too', () => {
    expect(rules.fileCircles(tree, [...KNOWN_FILE_CIRCLES, ['src/rest/app.ts', 'src/rest/route.ts']])).to.deep.equal([
      'a known circle is gone, remove it from KNOWN_FILE_CIRCLES: src/rest/app.ts <-> src/rest/route.ts',
    ]);
  });

  rule('every table a migration creates has an owner', rules.unownedTables, [
    [
      'a new table in any case of SQL or knex',
      {
        'db/migrations/012_widgets.ts':
          "export async function up(knex) {\n  await knex.schema.createTable('widgets', () => {});\n  await knex.raw('create table if not exists gadgets (id text)');\n}\n",
      },
      [
        'widgets (created in db/migrations/012_widgets.ts) has no owner',
        'gadgets (created in db/migrations/012_widgets.ts) has no owner',
      ],
    ],
  ]);

  it('every owned table is created by a migration: fails on an owner of a table that does not exist', () => {
    expect(rules.unownedTables(tree, { ...TABLE_OWNERS, ghosts: 'rest' })).to.deep.equal([
      'ghosts has an owner but no migration creates it',
    ]);
  });

  rule('only its owner names a table (migrations aside)', rules.tableOffences, [
    [
      'lower-case SQL, a knex call, a knex join, quoted SQL (and not on a comment)',
      {
        'src/console/latest.ts':
          "// The latest run (read from otp_runs through RunViews).\nexport const latest = (db) => db.raw('select id from otp_runs limit 1');\n",
        'src/auth/default-tenant.ts': "export const make = (trx) => trx('tenants').insert({ id: 'ten_x' });\n",
        'src/rest/project-names.ts':
          "export const names = (db) => db('idempotency_keys as i').join('projects as p', 'p.id', 'i.project_id');\n",
        'src/webhook-delivery/usage.ts':
          'export const reset = (db) => db.raw(\'UPDATE "project_usage" SET artifacts = 0\');\n',
      },
      [
        'src/console/latest.ts names otp_runs (owned by otp/store)',
        'src/auth/default-tenant.ts names tenants (owned by platform)',
        'src/rest/project-names.ts names projects (owned by platform)',
        'src/webhook-delivery/usage.ts names project_usage (owned by artifacts)',
      ],
    ],
  ]);

  rule('only src/config.ts and src/runner/options.ts read process.env, in any spelling', rules.envReaders, [
    [
      'process["env"], { env } = process, an import of env, process.env in a migration (and not on a comment)',
      {
        'src/otp/engine/level.ts':
          '// process.env is read by config.ts only.\nexport const level = process["env"].LOG_LEVEL;\n',
        'src/rest/env.ts': 'const { env } = process;\nexport const home = env.HOME;\n',
        'src/db/url.ts': "import { env } from 'node:process';\nexport const url = env.DATABASE_URL;\n",
        'db/migrations/013_flag.ts': 'export const flag = process.env.FLAG;\n',
      },
      [
        'src/otp/engine/level.ts reads process.env',
        'src/rest/env.ts reads process.env',
        'src/db/url.ts reads process.env',
        'db/migrations/013_flag.ts reads process.env',
      ],
    ],
  ]);

  rule('no source file is longer than 420 lines, .js files included', rules.longFiles, [
    [
      'a 500-line .js file (a 420-line one passes)',
      { 'src/console/static/big.js': 'x();\n'.repeat(500), 'src/console/static/fits.js': 'x();\n'.repeat(420) },
      ['src/console/static/big.js: 500 lines (at most 420)'],
    ],
  ]);

  rule('only src/validation/ajv.ts imports ajv or ajv-formats for more than types', rules.ajvMakers, [
    [
      'an Ajv instance of its own (a type import passes)',
      {
        'src/rest/own-ajv.ts':
          "import type { ErrorObject } from 'ajv';\nimport { Ajv } from 'ajv';\nexport const ajv = new Ajv();\nexport type E = ErrorObject;\n",
      },
      ["src/rest/own-ajv.ts: import { Ajv } from 'ajv' (only src/validation/ajv.ts makes Ajv instances)"],
    ],
  ]);

  describe('docs/architecture.md says what these rules check', () => {
    const doc = () => fs.readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');

    const sorted = (rooms: Record<string, string[]>) =>
      Object.fromEntries(Object.entries(rooms).map(([room, list]) => [room, [...list].sort()]));

    it('its table of rooms lists what each room may import, as the import rule has it', () => {
      expect(sorted(documentedRooms(doc()))).to.deep.equal(sorted(MAY_IMPORT));
    });

    it('its table of tables names the owner of each, as the table rules have it', () => {
      expect(documentedOwners(doc())).to.deep.equal(TABLE_OWNERS);
    });
  });
});
