// One PostgreSQL connection of its own, for a stream of hot statements (the group commit of step
// results; the claims, inserts and finishes of runs).
//
// Why not a pg.Pool of one: a pool hands out its idle client a tick later (process.nextTick), after
// every promise reaction already queued has run. When a group commit returns, its completions (each
// a run machine's transition and a step.exec sent) are queued reactions, so the next statement
// waited for all of them. Here a query is written to the socket in the call that makes it: the
// next batch is on its way to PostgreSQL before the last batch's completions are processed.
//
// Statements given a `name` are prepared once per connection (pg remembers them); after a lost
// connection the next query opens a new one, and its statements are prepared again.
//
// `customPlans`: each execution is planned for its own parameters (plan_cache_mode
// force_custom_plan), for the group commits: after five executions PostgreSQL may switch a prepared
// statement to a generic plan, which cannot see the batch's length (the LIMIT $n of the group
// commit, run-sql.ts) and, chosen while the tables were young, scanned every step row. Not for the
// run inserts: the setting reaches the foreign-key checks' own cached statements too, one per step
// row inserted, and planning each of them again is slower than the insert. (The measurements:
// docs/decisions.md, "Measured reasons in the hot paths".)
import pg from 'pg';

interface Waiting {
  config: pg.QueryConfig;
  resolve(result: pg.QueryResult): void;
  reject(err: unknown): void;
}

export class DedicatedConnection {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private ended = false;
  // One statement at a time on the connection; the others wait here, in order (pg's own queue is
  // deprecated).
  private busy = false;
  private readonly waiting: Waiting[] = [];

  constructor(
    private readonly url: string,
    /** Shown in pg_stat_activity.application_name. */
    private readonly name: string,
    /** A connection that failed between statements (its queries in flight fail on their own). */
    private readonly onError: (err: unknown) => void,
    private readonly options: { customPlans?: boolean } = {},
  ) {}

  query<R extends pg.QueryResultRow = pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>> {
    if (!this.busy) return this.run<R>(config);
    return new Promise((resolve, reject) =>
      this.waiting.push({ config, resolve: resolve as Waiting['resolve'], reject }),
    );
  }

  private async run<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>> {
    this.busy = true;
    try {
      // Connected: the statement is written before this call returns.
      const client = this.client ?? (await this.connect());
      return await client.query<R>(config);
    } finally {
      this.busy = false;
      const next = this.waiting.shift();
      if (next) this.run(next.config).then(next.resolve, next.reject);
    }
  }

  private connect(): Promise<pg.Client> {
    if (this.ended) return Promise.reject(new Error(`the ${this.name} connection is closed`));
    this.connecting ??= (async () => {
      const client = new pg.Client({
        connectionString: this.url,
        application_name: this.name,
        ...(this.options.customPlans ? { options: '-c plan_cache_mode=force_custom_plan' } : {}),
      });
      client.on('error', (err) => {
        this.onError(err);
        this.drop(client);
      });
      client.on('end', () => this.drop(client));
      try {
        await client.connect();
        if (this.ended) throw new Error(`the ${this.name} connection is closed`);
        this.client = client;
        return client;
      } catch (err) {
        this.drop(client);
        throw err;
      } finally {
        this.connecting = undefined;
      }
    })();
    return this.connecting;
  }

  private drop(client: pg.Client): void {
    if (this.client === client) this.client = undefined;
    client.end().catch(() => {});
  }

  /** Closes the connection (PostgreSQL finishes a statement already sent first); later queries fail. */
  async end(): Promise<void> {
    this.ended = true;
    const client = this.client ?? (await this.connecting?.catch(() => undefined));
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
