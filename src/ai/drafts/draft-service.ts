// POST /ai/test-cases/draft (docs/ai.md, "Drafts by a model"): a requirement's text and acceptance
// criteria to a draft test case, by any OpenAI-compatible model through the `openai` client. The
// answer is structured output; each step is checked against the TestCaseStep schema and an invalid
// answer is sent back once with its problems. No model configured: 503 ai_not_configured.
import OpenAI from 'openai';
import type { Principal } from '../../auth/principal.js';
import type { AiConfig } from '../../config.js';
import { errors, type FieldError } from '../../errors.js';
// The steps refer to the protocol's TestCaseStep by name: its schemas must be registered first.
import '../../otp/protocol/schemas/index.js';
import { compileBounded } from '../../validation/bounded.js';
import { DRAFT_RESPONSE_SCHEMA, draftMessages } from './prompt.js';

export interface RequirementSource {
  get(principal: Principal, id: string): Promise<Record<string, unknown>>;
}

export interface DraftedTestCase {
  title: string;
  description?: string;
  steps: Array<Record<string, unknown>>;
}

/** Saves a draft as a test case of status `draft` with a `covers` link to the requirement. */
export interface DraftSink {
  save(principal: Principal, draft: DraftedTestCase, requirementId: string): Promise<Record<string, unknown>>;
}

const validateDraft = compileBounded<DraftedTestCase>({
  type: 'object',
  required: ['title', 'steps'],
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 500 },
    description: { type: 'string', maxLength: 20000 },
    steps: { type: 'array', minItems: 1, maxItems: 200, items: { $ref: 'TestCaseStep' } },
  },
});

export class DraftService {
  private readonly client?: OpenAI;

  constructor(
    private readonly model: AiConfig['model'],
    private readonly requirements: RequirementSource,
    private readonly sink: DraftSink,
  ) {
    if (model)
      this.client = new OpenAI({
        baseURL: model.baseUrl,
        apiKey: model.apiKey,
        timeout: model.timeoutMs,
        maxRetries: 1,
      });
  }

  /** 503 when no model is configured: asked before the quota is charged. */
  ensureConfigured(): void {
    if (!this.client)
      throw errors.aiNotConfigured(
        'No language model is configured: set AI_BASE_URL, AI_MODEL (and AI_API_KEY) to an OpenAI-compatible endpoint',
      );
  }

  /** `charge` is called once the requirement is found, before the model is asked (a 402 stops it there). */
  async draft(principal: Principal, input: { requirementId: string; save?: boolean }, charge: () => Promise<void>) {
    this.ensureConfigured();
    const requirement = await this.requirements.get(principal, input.requirementId);
    await charge();
    const messages = draftMessages(requirement);
    let problems: FieldError[] = [];
    for (let attempt = 1; attempt <= 2; attempt += 1) {
      const text = await this.ask(messages);
      const parsed = parseJson(text);
      const checked = parsed.ok
        ? validateDraft(parsed.value, 'draft')
        : { ok: false as const, errors: [{ field: 'draft', message: parsed.message }] };
      if (checked.ok) {
        const draft = checked.value;
        const saved = input.save ? await this.sink.save(principal, draft, input.requirementId) : null;
        return {
          requirementId: input.requirementId,
          model: this.model!.model,
          attempts: attempt,
          draft,
          testCase: saved,
        };
      }
      problems = checked.errors;
      // Once more, with the answer and what is wrong with it.
      messages.push({ role: 'assistant', content: text });
      messages.push({
        role: 'user',
        content: `That answer is invalid: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}. Answer again with JSON that fixes these.`,
      });
    }
    throw errors.aiProviderFailed(
      'The model answered twice with a test case that does not validate against the step schema',
      { fields: problems },
    );
  }

  private async ask(messages: OpenAI.Chat.ChatCompletionMessageParam[]): Promise<string> {
    try {
      const completion = await this.client!.chat.completions.create({
        model: this.model!.model,
        messages,
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'test_case_draft', schema: DRAFT_RESPONSE_SCHEMA, strict: false },
        },
      });
      return completion.choices[0]?.message?.content ?? '';
    } catch (err) {
      throw errors.aiProviderFailed(`The language model did not answer: ${(err as Error).message}`);
    }
  }
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, message: 'the answer is not JSON' };
  }
}
