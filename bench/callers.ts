/**
 * Calls `call(i)` for every `i` from 0 to `n - 1`, `concurrency` callers at a time: each awaits
 * its call before it takes the next `i`, as that many clients in a closed loop would.
 */
export async function inCallers(n: number, concurrency: number, call: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await call(next++);
    }),
  );
}
