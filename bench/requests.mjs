// The requests of the scenarios that both bench/run.mjs and bench/instructions.mjs send, so that
// the two measure the same work.

/** The scopes of the bench's client and of its access token. */
export const SCOPES = 'customers:read customers:write webhooks:read webhooks:write';

/** (b): the n-th company update of customer `id`, alternating the two fields. */
export function companyUpdate(id, n) {
  return {
    method: 'PUT',
    path: `/v2/customers/${id}/company`,
    body: JSON.stringify(n % 2 ? { name: `Company ${n}` } : { type: 'plc' }),
  };
}

/** (c): a delivery of the sample event with a new attempt id. */
export function webhookDelivery(attemptId) {
  return {
    method: 'POST',
    path: '/v2/webhooks',
    body: JSON.stringify({
      event: 'learning.attempt.completed',
      payload: { user_id: 7, module_id: 3, attempt_id: attemptId },
    }),
  };
}
