// Every HTTP route family; the local server serves them all on one port.
import ack from './ack.js';
import configure from './configure.js';
import delivery from './delivery.js';
import dlq from './dlq.js';
import pop from './pop.js';
import push from './push.js';

export const allFunctions = [push, pop, ack, configure, dlq, delivery];
