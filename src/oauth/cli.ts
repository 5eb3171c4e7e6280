// Signing keys of OAuth access tokens from the command line (npm run oauth:keys -- <command>):
//   list             the keys and their status
//   rotate           a new active key; the old one keeps verifying (retiring)
//   retire [kid]     stop a retiring key (or every retiring key) from verifying
// Running processes sign with a rotated key within OAUTH_KEYS_REFRESH_MS and stop verifying a
// retired one within KEY_CACHE_MS. Needs DATABASE_URL (the embedded server lives inside `npm start`).
import { loadConfig } from '../config.js';
import { createDb, migrate } from '../db/connect.js';
import { SigningKeys } from './signing-keys.js';

async function main(args: string[]): Promise<void> {
  const config = loadConfig();
  if (!config.databaseUrl) throw new Error('set DATABASE_URL to the service database');
  // Two connections: migrate() holds its lock on one while the migrations run on the other.
  const db = createDb(config.databaseUrl, { max: 2 });
  try {
    await migrate(db);
    const keys = new SigningKeys(db);
    const [command, kid] = args;
    if (command === 'rotate') console.log(`active key: ${await keys.rotate()}`);
    else if (command === 'retire') console.log(`retired: ${(await keys.retire(kid)).join(', ') || 'nothing'}`);
    else if (command === 'list' || !command) console.table(await keys.list());
    else throw new Error(`unknown command "${command}": list, rotate or retire [kid]`);
  } finally {
    await db.destroy();
  }
}

main(process.argv.slice(2)).catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
