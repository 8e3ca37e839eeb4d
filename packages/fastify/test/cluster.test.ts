/**
 * Server processes behind the same Redis: concurrent identical requests split across a Fastify 5, a
 * Fastify 4 and an Express process run the handler once, and every answer carries the same status and body.
 */
import { fileURLToPath } from 'node:url';
import { describeClusterBurst } from '@flight/http-test-kit';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const fastify = { fixture: here('./fixtures/cluster-server.ts'), cwd: here('..') };
const fastify4 = { ...fastify, fixture: here('./fixtures/cluster-server-v4.ts') };
const express = { fixture: here('../../express/test/fixtures/cluster-server.ts'), cwd: here('../../express') };

describeClusterBurst('fastify 5 across two processes over Redis', [fastify, fastify], 50);
describeClusterBurst('fastify 5, fastify 4 and express over the same Redis', [fastify, fastify4, express], 60);
