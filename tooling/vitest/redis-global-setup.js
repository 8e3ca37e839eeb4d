// Makes sure the tests have a Redis: REDIS_URL if it answers, else the local
// 127.0.0.1:6379, else a redis-server of our own on a free port (stopped at the end).
import { spawn } from 'node:child_process';
import net from 'node:net';

function ping(host, port, timeoutMs = 500) {
  return new Promise((resolvePing) => {
    const socket = net.connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolvePing(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

function freePort() {
  return new Promise((res, rej) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
    srv.on('error', rej);
  });
}

let child;

export default async function setup() {
  const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  if (await ping(url.hostname, Number(url.port || 6379))) {
    process.env.REDIS_URL = url.toString();
    return;
  }
  const port = await freePort();
  child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  child.on('error', (err) => {
    console.error(`[flight tests] no Redis at ${url} and redis-server could not start: ${err.message}`);
  });
  for (let i = 0; i < 100; i++) {
    if (await ping('127.0.0.1', port)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  process.env.REDIS_URL = `redis://127.0.0.1:${port}`;
  return () => {
    child?.kill('SIGTERM');
  };
}
