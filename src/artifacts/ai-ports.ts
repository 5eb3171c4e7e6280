// The artifacts room's side of the ai room's ports (src/ai/index.ts, AiDeps): test cases to read and
// version (accepting a healing proposal), requirements to draft from, drafts saved with a `covers`
// link, a test case's links (the console's history page), and the bugs linked to cases and results. Spelled structurally: the artifacts
// room does not import the ai room.
import type { Principal } from '../auth/principal.js';
import type { Db } from '../db/connect.js';
import type { TestCaseSource } from '../otp/engine/test-case-source.js';
import { ArtifactBugLinks } from './bug-links.js';
import type { LinkService } from './links.js';
import type { ArtifactStore } from './store.js';

export function aiPortsOf(
  db: Db,
  stores: ReadonlyMap<string, ArtifactStore>,
  links: LinkService,
  source: TestCaseSource,
) {
  const testCases = stores.get('test_case')!;
  return {
    /** Bugs linked to test cases or to the results of OTP runs (the ai room's known issues). */
    bugLinks: new ArtifactBugLinks(db),
    testCases,
    requirements: stores.get('requirement')!,
    drafts: {
      async save(principal: Principal, draft: { title: string; steps: unknown[] }, requirementId: string) {
        const saved = await testCases.create(principal, { ...draft, status: 'draft' });
        await links.create(principal, testCases.def, saved.id as string, {
          targetId: requirementId,
          relation: 'covers',
        });
        return saved;
      },
    },
    testCaseExists: async (projectId: string, id: string) => (await source.testCases(projectId, [id])).length > 0,
    /** The artifacts linked to a test case (requirements it covers, bugs found by it, ...). */
    async caseLinks(principal: Principal, id: string) {
      const page = await links.list(principal, testCases.def, id, { limit: 100 } as never);
      return page.items.map((l) => ({ relation: l.relation, reads: l.reads, direction: l.direction, ...l.artifact }));
    },
  };
}
