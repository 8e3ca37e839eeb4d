/**
 * A demo child listens on a port its parent chose a moment earlier (the parent tells every node the
 * others' URLs before they start). In that moment another process may take the port — an outbound
 * connection's local port is enough — so a child whose listen fails with `EADDRINUSE` exits with a code
 * of its own, and the parent starts it again on fresh ports (`cluster.ts`).
 */

/** The exit code of a demo child whose port was taken before it could listen. */
export const PORT_TAKEN_EXIT_CODE = 98;

/** Exits with {@link PORT_TAKEN_EXIT_CODE} when `error` is a taken port; rethrows anything else. */
export function exitIfPortTaken(error: unknown): never {
  if ((error as NodeJS.ErrnoException | null)?.code === 'EADDRINUSE') {
    console.error(JSON.stringify({ level: 50, time: Date.now(), msg: 'port taken', err: String(error) }));
    process.exit(PORT_TAKEN_EXIT_CODE);
  }
  throw error;
}
