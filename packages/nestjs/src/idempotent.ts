import { createHash } from 'node:crypto';
import { IdempotencyConflictError, IdempotencyInProgressError, LockClient, validate } from '@holdfast/core';
import {
  BadRequestException,
  ConflictException,
  Inject,
  Injectable,
  SetMetadata,
  UnprocessableEntityException,
  UseInterceptors,
  applyDecorators,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { from, type Observable } from 'rxjs';

/** Options of `@Idempotent`. */
export interface IdempotentOptions {
  /**
   * The request header carrying the idempotency key (case-insensitive).
   * @default 'Idempotency-Key'
   */
  readonly header?: string;
  /**
   * How long a response is kept and replayed after the request completed, in ms.
   * @default 86_400_000 (one day)
   */
  readonly ttlMs?: number;
  /**
   * How long a duplicate request waits for the one still running, in ms; then 409.
   * @default 0 (409 at once, as Stripe answers)
   */
  readonly waitMs?: number;
  /**
   * A request without the header: `false` runs the handler as usual, `true` answers 400.
   * @default false
   */
  readonly required?: boolean;
  /**
   * The idempotency's name (`locks.idempotency(name)`): routes that share one share their keys.
   * @default 'http'
   */
  readonly name?: string;
}

/** A response as stored for replays. */
interface StoredResponse {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Record<string, string | string[]>;
}

const OPTIONS = Symbol('holdfast:idempotent');
/** Headers not replayed: the transport's, recomputed for each response. */
const TRANSPORT_HEADERS = new Set(['content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding', 'etag', 'x-powered-by']);

interface ResolvedOptions {
  readonly header: string;
  readonly ttlMs: number;
  readonly waitMs: number;
  readonly required: boolean;
  readonly name: string;
}

/**
 * Makes a route idempotent across every instance of the application, with
 * the module's `LockClient` (`locks.idempotency(name)`): the first request
 * carrying a key runs the handler and its response (status, body, headers) is
 * stored for `ttlMs`; every later request with that key gets that response,
 * with `Idempotent-Replayed: true`, without running the handler. The key's
 * fingerprint is the method, the route (its controller and handler) and a
 * SHA-256 of the JSON body: a key reused with another one answers 422; a
 * duplicate while the first runs answers 409 (after `waitMs`). A handler that
 * throws stores nothing: the next request with the key runs it again. A
 * request without the header runs as usual (400 with `required: true`).
 * Express or Fastify; the class must be a controller of an application that
 * imports `HoldfastModule`.
 */
export function Idempotent(options?: IdempotentOptions): MethodDecorator & ClassDecorator {
  const o = validate.optionsObject('options', options) as IdempotentOptions;
  const resolved: ResolvedOptions = {
    header: (validate.isDefault(o.header) ? 'Idempotency-Key' : validate.nameLike('header', o.header)).toLowerCase(),
    ttlMs: validate.isDefault(o.ttlMs) ? 86_400_000 : validate.positiveInteger('ttlMs', o.ttlMs),
    waitMs: validate.isDefault(o.waitMs) ? 0 : validate.nonNegativeInteger('waitMs', o.waitMs),
    required: validate.isDefault(o.required) ? false : validate.boolean('required', o.required),
    name: validate.isDefault(o.name) ? 'http' : validate.lockName(o.name),
  };
  return applyDecorators(SetMetadata(OPTIONS, resolved), UseInterceptors(IdempotentInterceptor));
}

/** The interceptor `@Idempotent` installs (see there). */
@Injectable()
export class IdempotentInterceptor implements NestInterceptor {
  constructor(
    @Inject(LockClient) private readonly locks: LockClient,
    @Inject(Reflector) private readonly reflector: Reflector,
  ) {}

  /** Runs the handler once per key, or replays its stored response. */
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const options = this.reflector.getAllAndOverride<ResolvedOptions | undefined>(OPTIONS, [context.getHandler(), context.getClass()]);
    const http = context.switchToHttp();
    const request = http.getRequest<{ method: string; headers: Record<string, string | string[] | undefined>; body?: unknown }>();
    const response = http.getResponse<HttpResponse>();
    const raw = options && request.headers[options.header];
    const key = Array.isArray(raw) ? raw[0] : raw;
    if (!options || key === undefined || key === '') {
      if (options?.required) throw new BadRequestException(`The \`${options.header}\` header is required`);
      return next.handle();
    }
    const route = `${context.getClass().name}.${context.getHandler().name}`;
    const fingerprint = createHash('sha256')
      .update(`${request.method} ${route} `)
      .update(JSON.stringify(request.body ?? null) ?? '')
      .digest('hex');
    return from(this.#run(options, key, fingerprint, next, response));
  }

  async #run(options: ResolvedOptions, key: string, fingerprint: string, next: CallHandler, response: HttpResponse): Promise<unknown> {
    const idempotency = this.locks.idempotency<StoredResponse>(options.name, { ttlMs: options.ttlMs });
    try {
      const { value, replayed } = await idempotency.run(
        key,
        async () => {
          const body = await lastValue(next.handle());
          return { status: statusOf(response), body, headers: replayableHeaders(response) };
        },
        { fingerprint, waitMs: options.waitMs },
      );
      if (!replayed) return value.body;
      for (const [name, header] of Object.entries(value.headers)) setHeader(response, name, header);
      setHeader(response, 'Idempotent-Replayed', 'true');
      setStatus(response, value.status);
      return value.body;
    } catch (error) {
      if (error instanceof IdempotencyConflictError) {
        throw new UnprocessableEntityException('This idempotency key was used with another request', { cause: error });
      }
      if (error instanceof IdempotencyInProgressError) {
        throw new ConflictException('A request with this idempotency key is still running: try again later', { cause: error });
      }
      throw error;
    }
  }
}

/** What the interceptor uses of Express's response and Fastify's reply. */
interface HttpResponse {
  statusCode?: number;
  status?: (code: number) => unknown;
  code?: (code: number) => unknown;
  setHeader?: (name: string, value: string | string[]) => unknown;
  header?: (name: string, value: string | string[]) => unknown;
  getHeaders?: () => Record<string, unknown>;
}

function statusOf(response: HttpResponse): number {
  return typeof response.statusCode === 'number' ? response.statusCode : 200;
}

function setStatus(response: HttpResponse, status: number): void {
  if (typeof response.status === 'function') response.status(status);
  else if (typeof response.code === 'function') response.code(status);
}

function setHeader(response: HttpResponse, name: string, value: string | string[]): void {
  if (typeof response.setHeader === 'function') response.setHeader(name, value);
  else if (typeof response.header === 'function') response.header(name, value);
}

function replayableHeaders(response: HttpResponse): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(response.getHeaders?.() ?? {})) {
    if (TRANSPORT_HEADERS.has(name.toLowerCase())) continue;
    if (typeof value === 'string' || Array.isArray(value)) headers[name] = value as string | string[];
    else if (typeof value === 'number') headers[name] = String(value);
  }
  return headers;
}

/** The last value an observable emits before it completes (a handler's response body). */
function lastValue(source: Observable<unknown>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let last: unknown;
    source.subscribe({ next: (value) => (last = value), error: reject, complete: () => resolve(last) });
  });
}
