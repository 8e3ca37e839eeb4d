/**
 * `@flight/http-test-kit`: the behaviour suites every framework binding runs unchanged. A binding's
 * tests provide a `Driver` (how to serve a framework-neutral route behind its middleware) and call
 * `registerMiddlewareSuite(driver)`; its cluster test calls `describeClusterBurst` with a server fixture, and
 * `registerResumeSuite(driver, { adapter, cluster })` runs the resumable streams over another adapter or a Redis Cluster.
 */
export * from './middleware-suite.js';
export * from './cluster-harness.js';
export { registerResumeSuite } from './resume-suite.js';
export type { StreamBackend } from './stream-servers.js';
