// Links between artifacts: a directed, named relation (a test case `covers` a requirement), stored
// once and listed on both ends (outgoing on one, incoming on the other). Both ends are foreign keys
// with ON DELETE CASCADE, so a deleted artifact takes its links with it.

import type { Principal } from '../auth/principal.js';
import type { Db } from '../db/connect.js';
import { errors } from '../errors.js';
import { newId } from '../ids.js';
import { type Page, pageQueryProperties, paginate } from '../rest/pagination.js';
import { type BodyOf, type QueryOf, type RouteDef, route } from '../rest/route.js';
import { pageSchema, registerSchema } from '../rest/schemas.js';
import type { ArtifactDefinition } from './kind.js';
import { capitalise, labelOfKinds } from './store.js';

interface Relation {
  /** Kinds the link may start from and end at; '*' for any. */
  from: readonly string[] | '*';
  to: readonly string[] | '*';
  /** How the relation reads from the other end. */
  inverse: string;
  description: string;
}

const WORK_ITEMS = ['bug', 'ticket', 'requirement', 'specification'] as const;

export const RELATIONS: Record<string, Relation> = {
  relates_to: { from: '*', to: '*', inverse: 'relates_to', description: 'any two artifacts are related' },
  covers: {
    from: ['test_case'],
    to: ['requirement', 'specification'],
    inverse: 'covered_by',
    description: 'a test case checks a requirement or specification',
  },
  specifies: {
    from: ['specification'],
    to: ['requirement'],
    inverse: 'specified_by',
    description: 'a specification details a requirement',
  },
  implements: {
    from: ['ticket'],
    to: ['requirement', 'specification'],
    inverse: 'implemented_by',
    description: 'a ticket carries out a requirement or specification',
  },
  found_by: {
    from: ['bug'],
    to: ['test_result', 'test_case', 'test_run'],
    inverse: 'found',
    description: 'a bug was found by a test result, case or run',
  },
  fixed_in: {
    from: ['bug', 'ticket'],
    to: ['release'],
    inverse: 'fixes',
    description: 'a bug or ticket is fixed in a release',
  },
  planned_for: {
    from: [...WORK_ITEMS, 'test_run'],
    to: ['release', 'milestone', 'release_plan'],
    inverse: 'plans',
    description: 'work is planned for a release, milestone or release plan',
  },
  blocks: { from: WORK_ITEMS, to: WORK_ITEMS, inverse: 'blocked_by', description: 'one work item blocks another' },
  duplicates: {
    from: '*',
    to: '*',
    inverse: 'duplicated_by',
    description: 'an artifact repeats another of the same kind',
  },
};

const relationNames = Object.keys(RELATIONS);

const linkedArtifact = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'kind', 'title'],
  properties: {
    id: { type: 'string' },
    kind: {
      type: 'string',
      description: 'Stored kind: bug, ticket, requirement, specification, test_case, test_result, release, ...',
    },
    title: { type: ['string', 'null'], description: 'Its title (or name, or the start of its content)' },
  },
};

const LinkSchema = registerSchema({
  $id: 'ArtifactLink',
  title: 'ArtifactLink',
  description: 'A link seen from one of its ends',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'relation', 'direction', 'reads', 'artifact', 'createdAt', 'createdBy'],
  properties: {
    id: { type: 'string', pattern: '^lnk_' },
    relation: { enum: relationNames, description: 'The relation, read from its source (from) end' },
    direction: {
      enum: ['outgoing', 'incoming'],
      description: 'outgoing: this artifact is the source; incoming: the other one is',
    },
    reads: { type: 'string', description: 'The relation as read from this end (covers / covered_by, ...)' },
    artifact: { ...linkedArtifact, description: 'The artifact at the other end' },
    createdAt: { type: 'string', format: 'date-time' },
    createdBy: { type: ['string', 'null'] },
    confirmedAt: {
      type: 'string',
      format: 'date-time',
      description: 'When someone confirmed a covers link still holds after the requirement changed (absent until then)',
    },
  },
});

const linkCreate = {
  $id: 'ArtifactLinkCreate',
  title: 'ArtifactLinkCreate',
  description: `A new link. Relations: ${Object.entries(RELATIONS)
    .map(([name, r]) => `${name} (${r.description})`)
    .join('; ')}`,
  type: 'object',
  additionalProperties: false,
  required: ['targetId'],
  properties: {
    targetId: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description: 'The artifact at the other end, in the same project',
    },
    relation: { enum: relationNames, default: 'relates_to' },
    direction: {
      enum: ['outgoing', 'incoming'],
      default: 'outgoing',
      description:
        'outgoing (default): this artifact is the source of the relation; incoming: the target is (e.g. from a requirement, `covers` incoming from a test case)',
    },
  },
} as const;
const LinkCreateSchema = registerSchema(linkCreate);
type LinkCreate = BodyOf<typeof linkCreate>;

const LinkPageSchema = pageSchema('ArtifactLinkPage', LinkSchema, 'Links of an artifact, both directions');

const linkQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    relation: { enum: relationNames, description: 'Only this relation' },
    direction: {
      enum: ['outgoing', 'incoming'],
      description: 'Only links from (outgoing) or to (incoming) this artifact',
    },
  },
} as const;
type LinkQuery = QueryOf<typeof linkQuery>;

const TITLE_SQL = `coalesce(o.data->>'title', o.data->>'name', left(o.data->>'content', 80), o.data->>'url')`;

/** A row of artifact_links with the artifact at the other end (LinkService.query). */
interface LinkRow {
  id: string;
  from_id: string;
  to_id: string;
  relation: string;
  created_at: Date;
  created_by: string | null;
  confirmed_at?: Date | null;
  other_id: string;
  other_kind: string;
  other_title: string | null;
}

function linkView(anchorId: string, row: LinkRow) {
  const outgoing = row.from_id === anchorId;
  return {
    id: row.id,
    relation: row.relation,
    direction: outgoing ? 'outgoing' : 'incoming',
    reads: outgoing ? row.relation : (RELATIONS[row.relation]?.inverse ?? row.relation),
    artifact: { id: row.other_id, kind: row.other_kind, title: row.other_title ?? null },
    createdAt: row.created_at.toISOString(),
    createdBy: row.created_by,
    ...(row.confirmed_at ? { confirmedAt: row.confirmed_at.toISOString() } : {}),
  };
}

function allows(kinds: readonly string[] | '*', kind: string): boolean {
  return kinds === '*' || kinds.includes(kind);
}

export class LinkService {
  constructor(
    private readonly db: Db,
    private readonly registry: ReadonlyMap<string, ArtifactDefinition>,
    /** Links of the project changed (after the change): readiness may have. */
    private readonly changed: (projectId: string) => void = () => {},
  ) {}

  private async anchor(principal: Principal, def: ArtifactDefinition, id: string) {
    const row = await this.db('artifacts')
      .where({ id, project_id: principal.projectId, kind: def.kind })
      .first('id', 'kind');
    if (!row) throw errors.notFound(capitalise(def.label), id);
    return row as { id: string; kind: string };
  }

  private query(principal: Principal, anchorId: string) {
    return this.db('artifact_links as l')
      .joinRaw('JOIN artifacts o ON o.id = CASE WHEN l.from_id = ? THEN l.to_id ELSE l.from_id END', [anchorId])
      .where('l.project_id', principal.projectId)
      .where((q) => q.where('l.from_id', anchorId).orWhere('l.to_id', anchorId))
      .select('l.*', 'o.id as other_id', 'o.kind as other_kind', this.db.raw(`${TITLE_SQL} AS other_title`));
  }

  async list(
    principal: Principal,
    def: ArtifactDefinition,
    id: string,
    page: LinkQuery,
  ): Promise<Page<ReturnType<typeof linkView>>> {
    await this.anchor(principal, def, id);
    const q = this.query(principal, id);
    if (page.relation) q.where('l.relation', page.relation);
    if (page.direction === 'outgoing') q.where('l.from_id', id);
    if (page.direction === 'incoming') q.where('l.to_id', id);
    return paginate(q, page, (row: LinkRow) => linkView(id, row), 'l.id');
  }

  async create(principal: Principal, def: ArtifactDefinition, id: string, input: LinkCreate) {
    const self = await this.anchor(principal, def, id);
    const relationName = input.relation ?? 'relates_to';
    const relation = RELATIONS[relationName];
    if (input.targetId === id)
      throw errors.validation('An artifact cannot link to itself', [
        { field: 'body.targetId', message: 'names this artifact' },
      ]);
    const target = await this.db('artifacts')
      .where({ id: input.targetId, project_id: principal.projectId })
      .first('id', 'kind');
    if (!target) {
      throw errors.validation('Unknown link target', [
        { field: 'body.targetId', message: `artifact ${input.targetId} not found in this project` },
      ]);
    }
    const targetDef = this.registry.get(target.kind);
    if (targetDef?.links === false) {
      throw errors.validation('This artifact cannot be linked', [
        { field: 'body.targetId', message: `a ${targetDef.label} takes no links` },
      ]);
    }
    const [from, to] = input.direction === 'incoming' ? [target, self] : [self, target];
    const fits =
      relationName === 'duplicates'
        ? from.kind === to.kind
        : allows(relation.from, from.kind) && allows(relation.to, to.kind);
    if (!fits) {
      const rule =
        relationName === 'duplicates'
          ? 'links two artifacts of the same kind'
          : `links a ${relation.from === '*' ? 'any artifact' : labelOfKinds(this.registry, relation.from)} to a ${relation.to === '*' ? 'any artifact' : labelOfKinds(this.registry, relation.to)}`;
      throw errors.validation(`"${relationName}" ${rule}`, [
        {
          field: 'body.relation',
          message: `${relationName} ${rule}; here it would link a ${labelOfKinds(this.registry, [from.kind])} to a ${labelOfKinds(this.registry, [to.kind])}`,
        },
      ]);
    }
    const linkId = newId('lnk');
    const inserted = await this.db('artifact_links')
      .insert({
        id: linkId,
        project_id: principal.projectId,
        from_id: from.id,
        to_id: to.id,
        relation: relationName,
        created_by: principal.keyId,
      })
      .onConflict(['from_id', 'to_id', 'relation'])
      .ignore()
      .returning('id');
    if (!inserted.length) {
      throw errors.conflict(`${from.id} already ${relationName} ${to.id}`, {
        fromId: from.id,
        toId: to.id,
        relation: relationName,
      });
    }
    const row = await this.query(principal, id).where('l.id', linkId).first();
    this.changed(principal.projectId);
    return linkView(id, row);
  }

  /**
   * Someone checked that a covers link of this requirement (or specification) still holds after it
   * changed: the link is no longer suspect, without a new run (docs/releases.md, "Suspect links").
   */
  async confirm(principal: Principal, def: ArtifactDefinition, id: string, linkId: string) {
    await this.anchor(principal, def, id);
    // The link covers this artifact, or a specification that specifies it.
    const updated = await this.db('artifact_links')
      .where({ id: linkId, project_id: principal.projectId, relation: 'covers' })
      .where((q) =>
        q
          .where('to_id', id)
          .orWhereIn(
            'to_id',
            this.db('artifact_links')
              .where({ to_id: id, relation: 'specifies', project_id: principal.projectId })
              .select('from_id'),
          ),
      )
      .update({ confirmed_at: this.db.fn.now(), confirmed_by: principal.keyId })
      .returning('id');
    if (!updated.length) throw errors.notFound(`Covers link of ${id}`, linkId);
    const row = await this.query(principal, id).where('l.id', linkId).first();
    this.changed(principal.projectId);
    return linkView(id, row ?? (await this.linkRow(principal, linkId)));
  }

  /** A link seen from its source (a covers link through a specification is not at the requirement). */
  private async linkRow(principal: Principal, linkId: string): Promise<LinkRow> {
    const link = await this.db('artifact_links')
      .where({ id: linkId, project_id: principal.projectId })
      .first('from_id');
    return this.query(principal, link.from_id).where('l.id', linkId).first();
  }

  async remove(principal: Principal, def: ArtifactDefinition, id: string, linkId: string): Promise<void> {
    await this.anchor(principal, def, id);
    const deleted = await this.db('artifact_links')
      .where({ id: linkId, project_id: principal.projectId })
      .where((q) => q.where('from_id', id).orWhere('to_id', id))
      .delete();
    if (!deleted) throw errors.notFound('Link', linkId);
    this.changed(principal.projectId);
  }
}

export function linkRoutes(def: ArtifactDefinition, links: LinkService): RouteDef[] {
  const base = `/${def.path}/:id/links`;
  const tag = def.path;
  const { read, write } = def.scopes ?? { read: 'read', write: 'write' };
  return [
    route<unknown, LinkQuery>({
      method: 'get',
      path: base,
      auth: read,
      tag,
      operationId: `list${def.schemaName}Links`,
      summary: `Links of a ${def.label}, both directions (outgoing and incoming)`,
      query: linkQuery,
      response: LinkPageSchema,
      handler: ({ principal, params, query }) => links.list(principal, def, params.id, query),
    }),
    route<LinkCreate>({
      method: 'post',
      path: base,
      auth: write,
      tag,
      status: 201,
      operationId: `create${def.schemaName}Link`,
      summary: `Link a ${def.label} to another artifact of the project`,
      body: LinkCreateSchema,
      response: LinkSchema,
      handler: ({ principal, params, body }) => links.create(principal, def, params.id, body),
    }),
    ...(def.coverage
      ? [
          {
            method: 'post',
            path: `${base}/:linkId/confirm`,
            auth: write,
            tag,
            operationId: `confirm${def.schemaName}Link`,
            summary: `Confirm that a covers link of a ${def.label} still holds after it changed: the link is no longer suspect`,
            description: `A covers link is suspect when the ${def.label}'s title, description or acceptance criteria changed after the covering case last passed; it stops being suspect when the case runs again (a new result) or when confirmed here. The link covers this ${def.label} or a specification that specifies it.`,
            response: LinkSchema,
            handler: ({ principal, params }) => links.confirm(principal, def, params.id!, params.linkId!),
          } satisfies RouteDef,
        ]
      : []),
    {
      method: 'delete',
      path: `${base}/:linkId`,
      auth: write,
      tag,
      status: 204,
      operationId: `delete${def.schemaName}Link`,
      summary: `Remove a link of a ${def.label} (from either end)`,
      handler: async ({ principal, params }) => {
        await links.remove(principal, def, params.id, params.linkId);
        return undefined;
      },
    },
  ];
}
