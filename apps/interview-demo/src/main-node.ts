/** Entry point of one demo node: `pnpm --filter @flight/interview-demo start:node`. */
import { exitWithParent } from './exit-with-parent.js';
import { configFromEnv, startNode } from './node.js';
import { exitIfPortTaken } from './port-taken.js';

const node = await startNode(configFromEnv()).catch(exitIfPortTaken);
let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  node.logger.info({ signal }, 'stopping');
  const force = setTimeout(() => process.exit(0), 3000);
  force.unref();
  const exit = () => process.exit(0);
  node.close().then(exit, exit);
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
exitWithParent(() => stop('parent exited'));
process.on('unhandledRejection', (error) => node.logger.error({ err: error }, 'unhandled rejection'));
