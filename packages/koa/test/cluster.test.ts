/**
 * Two Koa processes and one Express process behind the same Redis: 60 concurrent identical requests
 * split across them run the handler once, and all 60 answers carry the same status and body.
 */
import { fileURLToPath } from 'node:url';
import { describeClusterBurst } from '@flight/http-test-kit';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const koa = { fixture: here('./fixtures/cluster-server.ts'), cwd: here('..') };
const express = { fixture: here('../../express/test/fixtures/cluster-server.ts'), cwd: here('../../express') };

describeClusterBurst('koa (two processes) and express (one) over the same Redis', [koa, koa, express], 60);
