let nextAttemptId = 1000;

export type AttemptCompletedBody = {
  event: 'learning.attempt.completed';
  payload: { user_id: number; module_id: number; attempt_id: number } & Record<string, unknown>;
};

/** A valid learning.attempt.completed delivery with a fresh attempt_id. */
export function attemptCompleted(
  payload: Partial<AttemptCompletedBody['payload']> = {},
): AttemptCompletedBody {
  return {
    event: 'learning.attempt.completed',
    payload: { user_id: 7, module_id: 3, attempt_id: nextAttemptId++, ...payload },
  };
}
