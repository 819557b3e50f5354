import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback npm registry mirror that serves no signatures, as many mirrors and proxies do. */
export interface Mirror {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Package metadata documents served so far (each with its signatures removed). */
  metadataServed(): number;
  close(): Promise<void>;
}

/**
 * Forwards every request to `upstream` and strips `dist.signatures` from the metadata it
 * returns (version documents and whole packuments); tarballs pass through as they are.
 */
export async function startSignaturelessMirror(upstream: string): Promise<Mirror> {
  const base = upstream.replace(/\/+$/, '');
  let served = 0;
  const server: Server = createServer((request, response) => {
    void (async () => {
      const reply = await fetch(`${base}${request.url ?? '/'}`, { headers: { accept: request.headers.accept ?? '*/*' } });
      const type = reply.headers.get('content-type') ?? 'application/octet-stream';
      if (!type.includes('json')) {
        response.writeHead(reply.status, { 'content-type': type });
        response.end(Buffer.from(await reply.arrayBuffer()));
        return;
      }
      const document = (await reply.json()) as { dist?: { signatures?: unknown }; versions?: Record<string, { dist?: { signatures?: unknown } }> };
      delete document.dist?.signatures;
      for (const version of Object.values(document.versions ?? {})) delete version.dist?.signatures;
      served++;
      response.writeHead(reply.status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(document));
    })().catch((error: unknown) => {
      response.writeHead(502, { 'content-type': 'text/plain' });
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    metadataServed: () => served,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
