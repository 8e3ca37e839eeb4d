/**
 * Two server processes behind the same Redis: 50 concurrent identical requests split across both run
 * the handler once, and all 50 answers carry the same status and body.
 */
import { fileURLToPath } from 'node:url';
import { describeClusterBurst } from '@flight/http-test-kit';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const express = { fixture: here('./fixtures/cluster-server.ts'), cwd: here('..') };

describeClusterBurst('express across two processes over Redis', [express, express], 50);
