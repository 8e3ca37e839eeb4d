/** @flight/reliability: fault-injection helpers shared by the reliability tests and the chaos run. */
export { startTcpProxy, type TcpProxy, type ProxyMode } from '@flight/test-servers';
export { recordFigure, trackUnhandledRejections, sleep, eventually, FIGURES_FILE } from './figures.js';
export { startNode, expectedValue, FAST_POLICY, STAGE, type TestNode } from './node.js';
export { runChaos, formatSummary, type ChaosOptions, type ChaosSummary } from './chaos-run.js';
