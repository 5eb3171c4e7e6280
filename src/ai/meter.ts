// What an ai/* operation is charged through before it does its work (the quota lives in src/ai/quota/).
export interface AiMeter {
  charge(projectId: string, operation: string, cost: number): Promise<void>;
}

/** A meter that charges nothing (tests, installs without a quota). */
export const unmetered: AiMeter = { charge: async () => {} };
