/** A GET as a client behind the load balancer sends it: every node is reached by the same public `Host`. */
import { request as httpRequest } from 'node:http';

export interface PublicAnswer {
  status: number;
  body: string;
  /** `x-flight-role`. */
  role: string | undefined;
  age: string | undefined;
  /** From sending the request to its body's end (ms). */
  tookMs: number;
}

/** A GET to `url` with the public `Host` (`api.example`), its body read as text. */
export function publicGet(url: string): Promise<PublicAnswer> {
  const startedAt = Date.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { host: 'api.example' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (piece: string) => (body += piece));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          body,
          role: res.headers['x-flight-role'] as string | undefined,
          age: res.headers.age,
          tookMs: Date.now() - startedAt,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
