// Run by lifecycle-logs.e2e-spec.ts: logs `stopped`, exits through exitOnceLogged() as main.ts
// does, and logs one more line as soon as the log destination has closed (before the process
// exits on its 'close' event), as a request cut by the stop may while it finishes.
import pino from 'pino';
import { exitOnceLogged } from '../../dist/src/logging/lifecycle-log.js';

const destination = pino.destination({ dest: 1, sync: false });
const logger = pino(destination);
logger.info('stopped');
exitOnceLogged(logger, 0);
const late = () => (destination.destroyed ? logger.info('late') : setImmediate(late));
late();
