/**
 * HTTP from a chosen loopback source address. All of 127.0.0.0/8 is this machine, so a test can
 * be many clients: the server sees each request's socket come from the address asked for, as
 * it would see different machines (the sign-in limits count per address).
 */
import http from 'node:http';

export interface LoopbackRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Source address, e.g. '127.3.0.7'. Default: 127.0.0.1. */
  from?: string;
}

export function loopbackFetch(url: string, { method = 'GET', headers = {}, body, from }: LoopbackRequest = {}): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, ...(from ? { localAddress: from } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const h = new Headers();
        for (let i = 0; i < res.rawHeaders.length; i += 2) h.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        const status = res.statusCode ?? 0;
        resolve(new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage ?? '', headers: h }));
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

let next = 0;
/** A loopback address no other request of this test process used: 127.1.0.1, 127.1.0.2, … */
export function freshAddress(): string {
  next++;
  return `127.${1 + (next >> 16)}.${(next >> 8) & 255}.${next & 255 || 1}`;
}
