// OAuth 2.1 (src/oauth/): the provider's state (clients, grants, sessions, codes, refresh tokens,
// interactions) in one table the knex adapter reads by model and id, so any process can serve any
// step; the signing keys, rotatable; the JWT access tokens revoked before they expire; and the
// secrets that sign the provider's cookies (shared by every process).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('oauth_models', (t) => {
    t.text('model').notNullable();
    t.text('id').notNullable();
    t.jsonb('payload').notNullable();
    t.text('grant_id');
    t.text('user_code');
    t.text('uid');
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('consumed_at', { useTz: true });
    t.primary(['model', 'id']);
    t.index(['grant_id']);
    t.index(['uid']);
    t.index(['expires_at']);
  });
  await knex.schema.createTable('oauth_signing_keys', (t) => {
    t.text('kid').primary();
    t.text('alg').notNullable();
    t.jsonb('private_jwk').notNullable();
    t.jsonb('public_jwk').notNullable();
    // active: signs new tokens (one at a time); retiring: only verifies; retired: refused.
    t.text('status').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('rotated_at', { useTz: true });
    t.timestamp('retired_at', { useTz: true });
  });
  await knex.raw(
    `ALTER TABLE oauth_signing_keys ADD CONSTRAINT oauth_signing_keys_status CHECK (status IN ('active', 'retiring', 'retired'))`,
  );
  await knex.raw(
    `CREATE UNIQUE INDEX oauth_signing_keys_one_active ON oauth_signing_keys ((true)) WHERE status = 'active'`,
  );
  await knex.schema.createTable('oauth_revoked_tokens', (t) => {
    t.text('jti').primary();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['expires_at']);
  });
  await knex.schema.createTable('oauth_secrets', (t) => {
    t.text('name').primary();
    t.text('value').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['oauth_secrets', 'oauth_revoked_tokens', 'oauth_signing_keys', 'oauth_models']) {
    await knex.schema.dropTableIfExists(table);
  }
}
