// The claimed runs read in the claim's own snapshot. CLAIM_QUEUE joined otp_queue_claim's ids to
// otp_runs in one statement, whose snapshot is taken when it starts; the function (plpgsql, VOLATILE)
// takes a new snapshot for each statement inside it, so it could claim a run committed after the
// outer statement began, which the outer join then did not see: the run was marked running and its
// claimer never heard of it. Here the rows are read by a statement of the function after the claim
// (docs/decisions.md, "Queues").
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
CREATE OR REPLACE FUNCTION otp_queue_claim_rows(p_project text, p_session text, p_instance text, p_limit int,
                                                p_now timestamptz, p_policy jsonb, p_known text[])
RETURNS TABLE (id text, project_id text, vars jsonb, allowed_origins jsonb, test_cases jsonb, ord bigint, steps json)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  ids text[];
BEGIN
  SELECT coalesce(array_agg(q.run_id ORDER BY q.n), '{}') INTO ids
    FROM otp_queue_claim(p_project, p_session, p_instance, p_limit, p_now, p_policy) WITH ORDINALITY AS q(run_id, n);
  RETURN QUERY
  SELECT r.id, r.project_id, r.vars, r.allowed_origins, r.test_cases, c.n,
         CASE WHEN r.id = ANY(p_known) THEN NULL ELSE (
           SELECT json_agg(json_build_object('step_index', s.step_index, 'case_index', s.case_index, 'action', s.action,
                                             'timeout_ms', s.timeout_ms, 'continue_on_fail', s.continue_on_fail,
                                             'evidence_policy', s.evidence_policy, 'label', s.label) ORDER BY s.step_index)
             FROM otp_run_steps s WHERE s.run_id = r.id) END
    FROM unnest(ids) WITH ORDINALITY AS c(run_id, n) JOIN otp_runs r ON r.id = c.run_id
   ORDER BY c.n;
END $$;`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION IF EXISTS otp_queue_claim_rows(text, text, text, int, timestamptz, jsonb, text[])');
}
