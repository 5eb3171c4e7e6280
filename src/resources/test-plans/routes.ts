import type { RouteDef } from '../../rest/route.js';
import type { Db } from '../../db/connect.js';
import { TestCaseModel, TestPlanModel } from '../../db/models.js';
import { newId } from '../../ids.js';
import { errors } from '../../errors.js';
import { paginate, pageQueryProperties } from '../../rest/pagination.js';
import { testPlanCreateSchema, testPlanPatchSchema } from './schema.js';

/** Every id must name a test case of the project; the error lists each one that does not. */
async function checkCasesExist(db: Db, projectId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  const found = new Set(
    (await TestCaseModel.query(db).select('id').where('project_id', projectId).whereIn('id', ids)).map((r) => r.id),
  );
  const fields = ids.flatMap((id, i) =>
    found.has(id) ? [] : [{ field: `body.testCaseIds[${i}]`, message: `test case ${id} not found in this project` }],
  );
  if (fields.length) throw errors.validation('Unknown test cases', fields);
}

export function testPlanRoutes({ db }: { db: Db }): RouteDef[] {
  const tag = 'tests/plans';
  const find = async (projectId: string, id: string) => {
    const row = await TestPlanModel.query(db).findOne({ id, project_id: projectId });
    if (!row) throw errors.notFound('Test plan', id);
    return row;
  };
  return [
    {
      method: 'post', path: '/tests/plans', auth: 'write', tag, status: 201, body: testPlanCreateSchema,
      summary: 'Create a test plan: an ordered list of test cases',
      handler: async ({ principal, body }) => {
        await checkCasesExist(db, principal.projectId, body.testCaseIds);
        const row = await TestPlanModel.query(db).insertAndFetch({
          id: newId('tp'),
          tenantId: principal.tenantId,
          projectId: principal.projectId,
          title: body.title,
          description: body.description ?? null,
          testCaseIds: body.testCaseIds,
        });
        return row.toJSON();
      },
    },
    {
      method: 'get', path: '/tests/plans', auth: 'read', tag, query: { type: 'object', properties: pageQueryProperties },
      summary: 'List test plans',
      handler: ({ principal, query }) =>
        paginate(TestPlanModel.query(db).where('project_id', principal.projectId) as never, query, (row: TestPlanModel) => row.toJSON()),
    },
    {
      method: 'get', path: '/tests/plans/:id', auth: 'read', tag, summary: 'Read a test plan',
      handler: async ({ principal, params }) => (await find(principal.projectId, params.id)).toJSON(),
    },
    {
      method: 'patch', path: '/tests/plans/:id', auth: 'write', tag, body: testPlanPatchSchema,
      summary: 'Change a test plan',
      handler: async ({ principal, params, body }) => {
        const row = await find(principal.projectId, params.id);
        if (body.testCaseIds) await checkCasesExist(db, principal.projectId, body.testCaseIds);
        return (await row.$query(db).patchAndFetch({ ...body, version: row.version + 1, updatedAt: new Date() })).toJSON();
      },
    },
    {
      method: 'delete', path: '/tests/plans/:id', auth: 'write', tag, summary: 'Delete a test plan',
      handler: async ({ principal, params }) => {
        const deleted = await TestPlanModel.query(db).delete().where({ id: params.id, project_id: principal.projectId });
        if (!deleted) throw errors.notFound('Test plan', params.id);
      },
    },
  ];
}
