// Where the AI allowance is charged: each ai/* route and MCP tool declares what it costs (charges.ts),
// and the Api and the MCP server charge it before any work, so a call over the allowance writes
// nothing. The quota room (src/ai/quota/) implements it; `unmetered` charges nothing.

export interface AiMeter {
  /** Counts `cost` calls of `operation` against the project's allowance; throws an AppError when over it. */
  charge(projectId: string, operation: string, cost: number): Promise<void>;
}

/** A meter that never refuses (no quota wired yet, or a caller that is not metered). */
export const unmetered: AiMeter = { charge: async () => {} };
