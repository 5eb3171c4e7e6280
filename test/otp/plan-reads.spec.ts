import { expect } from 'chai';
import { DedicatedConnection } from '../../src/db/dedicated-connection.js';
import { ArtifactTestCaseSource } from '../../src/artifacts/tests/test-case-source.js';
import { startTestService, type TestService } from '../support/service.js';

// The run planner's reads of test cases, batched on a connection of their own: runs planned at the
// same moment share one statement, and each still sees only its own project's test cases.
describe('ArtifactTestCaseSource with a connection of its own (the planner reads batched)', () => {
  let t: TestService;
  let connection: DedicatedConnection;
  let statements = 0;
  let source: ArtifactTestCaseSource;
  const ours: string[] = [];
  const theirs: string[] = [];
  let otherProject: string;
  let ownProject: string;

  const createCase = async (key: string | undefined, title: string) => {
    const body = { title, steps: [{ otp: { action: 'navigate', url: `https://shop.test/${title}` } }] };
    const created = await t.request('POST', '/tests/cases', { key, body });
    expect(created.status).to.equal(201);
    return created.body.id as string;
  };

  before(async () => {
    t = await startTestService();
    const other = await t.newProject();
    otherProject = other.projectId;
    ownProject = (await t.service.db('api_keys').first('project_id')).project_id;
    for (const n of [1, 2]) ours.push(await createCase(undefined, `ours-${n}`));
    for (const n of [1, 2]) theirs.push(await createCase(other.key, `theirs-${n}`));
    connection = new DedicatedConnection(t.database.url, 'plan-reads-spec', () => {});
    // The real connection, its statements counted on the way.
    const counted = Object.assign(Object.create(connection), {
      query: (config: Parameters<DedicatedConnection['query']>[0]) => {
        statements++;
        return connection.query(config);
      },
    }) as DedicatedConnection;
    source = new ArtifactTestCaseSource(t.service.db, counted);
  });
  after(async () => {
    await connection?.end();
    await t?.stop();
  });

  it('answers each read its own project among its ids, reads made together in one statement', async () => {
    statements = 0;
    const all = [...ours, ...theirs, 'tc_missing'];
    // The first read goes out alone; the three made while it is in flight share the next statement.
    const [own, other, ownFirst, otherLast] = await Promise.all([
      source.testCases(ownProject, all),
      source.testCases(otherProject, all),
      source.testCases(ownProject, [ours[0]!, theirs[0]!]),
      source.testCases(otherProject, [theirs[1]!]),
    ]);
    const ids = (cases: Array<{ id: string }>) => cases.map((c) => c.id).sort();
    expect(ids(own)).to.deep.equal([...ours].sort());
    expect(ids(other)).to.deep.equal([...theirs].sort());
    expect(ids(ownFirst)).to.deep.equal([ours[0]]);
    expect(ids(otherLast)).to.deep.equal([theirs[1]]);
    expect(statements).to.equal(2);
    const first = own.find((c) => c.id === ours[0])!;
    expect(first.title).to.equal('ours-1');
    expect(first.steps).to.deep.equal([{ otp: { action: 'navigate', url: 'https://shop.test/ours-1' } }]);
  });

  it('answers what the scoped knex read answers', async () => {
    const pooled = new ArtifactTestCaseSource(t.service.db);
    const byId = (cases: Array<{ id: string }>) => [...cases].sort((a, b) => (a.id < b.id ? -1 : 1));
    for (const [project, ids] of [[ownProject, [...ours, ...theirs]], [otherProject, [...theirs, ours[0]!]]] as const) {
      expect(byId(await source.testCases(project, [...ids]))).to.deep.equal(byId(await pooled.testCases(project, [...ids])));
    }
  });
});
