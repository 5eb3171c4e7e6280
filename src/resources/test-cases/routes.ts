import type { RouteDef } from '../../rest/route.js';
import type { Db } from '../../db/connect.js';
import { TestCaseModel } from '../../db/models.js';
import { newId } from '../../ids.js';
import { errors } from '../../errors.js';
import { paginate, pageQueryProperties } from '../../rest/pagination.js';
import { testCaseCreateSchema, testCasePatchSchema } from './schema.js';

const toJson = (row: TestCaseModel) => row.toJSON();

export function testCaseRoutes({ db }: { db: Db }): RouteDef[] {
  const tag = 'tests/cases';
  const find = async (projectId: string, id: string) => {
    const row = await TestCaseModel.query(db).findOne({ id, project_id: projectId });
    if (!row) throw errors.notFound('Test case', id);
    return row;
  };
  return [
    {
      method: 'post', path: '/tests/cases', auth: 'write', tag, status: 201, body: testCaseCreateSchema,
      summary: 'Create a test case',
      handler: async ({ principal, body }) =>
        toJson(
          await TestCaseModel.query(db).insertAndFetch({
            id: newId('tc'),
            tenantId: principal.tenantId,
            projectId: principal.projectId,
            title: body.title,
            description: body.description ?? null,
            steps: body.steps,
          }),
        ),
    },
    {
      method: 'get', path: '/tests/cases', auth: 'read', tag, query: { type: 'object', properties: pageQueryProperties },
      summary: 'List test cases',
      handler: ({ principal, query }) =>
        paginate(TestCaseModel.query(db).where('project_id', principal.projectId) as never, query, (row: TestCaseModel) => toJson(row)),
    },
    {
      method: 'get', path: '/tests/cases/:id', auth: 'read', tag, summary: 'Read a test case',
      handler: async ({ principal, params }) => toJson(await find(principal.projectId, params.id)),
    },
    {
      method: 'patch', path: '/tests/cases/:id', auth: 'write', tag, body: testCasePatchSchema,
      summary: 'Change a test case (title, description, steps)',
      handler: async ({ principal, params, body }) => {
        const row = await find(principal.projectId, params.id);
        return toJson(await row.$query(db).patchAndFetch({ ...body, version: row.version + 1, updatedAt: new Date() }));
      },
    },
    {
      method: 'delete', path: '/tests/cases/:id', auth: 'write', tag, summary: 'Delete a test case',
      handler: async ({ principal, params }) => {
        const deleted = await TestCaseModel.query(db).delete().where({ id: params.id, project_id: principal.projectId });
        if (!deleted) throw errors.notFound('Test case', params.id);
      },
    },
  ];
}
