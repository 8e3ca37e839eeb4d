/**
 * A child started by `cluster.ts` exits when the process that started it is gone (a test worker killed
 * by its runner never gets to stop its children): `FLIGHT_PARENT_PID` names the parent; while it is set,
 * an unref'd timer checks that the parent still lives and calls `stop` once it does not.
 */
export function exitWithParent(stop: () => void, everyMs = 500): void {
  const parent = Number(process.env.FLIGHT_PARENT_PID);
  if (!Number.isSafeInteger(parent) || parent <= 0) return;
  const timer = setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch {
      clearInterval(timer);
      stop();
    }
  }, everyMs);
  timer.unref();
}
