/** Polls `check` until it holds, or fails after `timeoutMs` (a change that lands asynchronously). */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) {
      throw new Error(`condition not reached within ${timeoutMs / 1000} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
