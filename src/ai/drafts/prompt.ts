// What the model is asked for a draft test case, and the JSON shape it must answer in.
import type OpenAI from 'openai';

/** The structured output asked of the model (each step's `otp` is then checked against TestCaseStep). */
export const DRAFT_RESPONSE_SCHEMA = {
  type: 'object',
  required: ['title', 'steps'],
  properties: {
    title: { type: 'string' },
    description: { type: 'string' },
    steps: {
      type: 'array',
      items: {
        type: 'object',
        required: ['otp'],
        properties: {
          label: { type: 'string' },
          otp: {
            type: 'object',
            description:
              'An OTP action: navigate {url}, click {locator}, type {locator, text}, assert {kind, locator, expected}, ...',
          },
        },
      },
    },
  },
};

const SYSTEM = `You write UI test cases for the OTP test protocol. Answer only JSON: {"title", "description", "steps": [{"label", "otp"}]}.
Each otp is one action: {"action":"navigate","url":"..."}, {"action":"click","locator":{"by":"role","value":"button","name":"Save"}},
{"action":"type","locator":{"by":"label","value":"Email"},"text":"..."}, {"action":"assert","kind":"text","locator":{...},"expected":"..."}.
Locators: by one of testid, role, label, placeholder, text, alt, title, css, xpath, with value. Use {{name}} for values the run supplies.`;

export function draftMessages(requirement: Record<string, unknown>): OpenAI.Chat.ChatCompletionMessageParam[] {
  const criteria = (requirement.acceptanceCriteria as string[] | undefined) ?? [];
  const text = [
    `Requirement ${String(requirement.externalId ?? requirement.id)}: ${String(requirement.title)}`,
    requirement.description ? String(requirement.description) : '',
    criteria.length ? `Acceptance criteria:\n${criteria.map((c, i) => `${i + 1}. ${c}`).join('\n')}` : '',
  ]
    .filter(Boolean)
    .join('\n\n');
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: `Write one test case that checks this requirement.\n\n${text}` },
  ];
}
