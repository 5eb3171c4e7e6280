// Every artifact resource, in the order they appear in the API description (and in which their
// schemas are registered). Adding a resource is adding its defineArtifact() file to a group folder and
// listing it here (and, when it needs an index or a constraint, a migration).

import { bugs } from './bugs/bugs.js';
import type { ArtifactDefinition } from './kind.js';
import { kb } from './knowledge/kb.js';
import { memories } from './knowledge/memories.js';
import { notes } from './knowledge/notes.js';
import { milestones } from './releases/milestones.js';
import { releasePlans } from './releases/release-plans.js';
import { releases } from './releases/releases.js';
import { requirements } from './requirements/requirements.js';
import { specifications } from './requirements/specifications.js';
import { testCases } from './tests/cases.js';
import { testPlans } from './tests/plans.js';
import { testResults } from './tests/results.js';
import { testRuns } from './tests/runs.js';
import { tickets } from './tickets/tickets.js';
import { webhooksDefinition } from './webhooks/webhooks.js';

const content: ArtifactDefinition[] = [
  bugs,
  tickets,
  requirements,
  specifications,
  testCases,
  testPlans,
  testRuns,
  testResults,
  releases,
  releasePlans,
  milestones,
  kb,
  memories,
  notes,
];

export const artifactDefinitions: readonly ArtifactDefinition[] = [
  ...content,
  webhooksDefinition(content.map((d) => d.kind)),
];
