// What a console path's parameters may hold, by their names: ids of their kind, and the words of an
// action. A path whose parameter does not fit is not the console's: the route passes it on, and the REST
// app answers 404 as for any unknown path.
import type Koa from 'koa';

const ID_OF: Readonly<Record<string, RegExp>> = {
  run: /^otr_[a-z0-9]{1,60}$/,
  session: /^ots_[a-z0-9]{1,60}$/,
  testCase: /^tc_[a-z0-9]{1,60}$/,
  release: /^rel_[a-z0-9]{1,60}$/,
  proposal: /^heal_[a-z0-9]{1,60}$/,
  quarantineAction: /^(quarantine|release)$/,
  decision: /^(accept|reject)$/,
};

/** Every parameter of the route fits its pattern. */
export function idsValid(params: Readonly<Record<string, string>>): boolean {
  return Object.entries(params).every(([name, value]) => ID_OF[name]?.test(value) ?? true);
}

/** A query parameter as one string ('' when absent or repeated). */
export function queryText(ctx: Koa.Context, name: string): string {
  const value = ctx.query[name];
  return typeof value === 'string' ? value : '';
}

/** A query parameter that must be an id of `kind`, or undefined. */
export function queryId(ctx: Koa.Context, name: string, kind: keyof typeof ID_OF & string): string | undefined {
  const value = queryText(ctx, name);
  return ID_OF[kind]!.test(value) ? value : undefined;
}
