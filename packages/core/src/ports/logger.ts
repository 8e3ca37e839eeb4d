/**
 * The logging port, shaped like pino's: pass a pino logger (or a child of one) as is.
 * The first argument carries structured fields (`stage`, `key`, `role`, `epoch`, ...).
 */
export interface FlightLogger {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

/** Drops everything; the default. */
export const silentLogger: FlightLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};
