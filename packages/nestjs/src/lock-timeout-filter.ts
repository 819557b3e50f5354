import { InvalidArgumentError, LockTimeoutError } from '@holdfast/core';
import { Catch, HttpException, type ArgumentsHost, type HttpServer } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';

/** Options of `new LockTimeoutFilter(options)`. */
export interface LockTimeoutFilterOptions {
  /**
   * The HTTP status of a request whose lock wait ran out: 409 Conflict, or 423
   * Locked (WebDAV's, which some APIs use for a busy resource).
   * @default 409
   */
  readonly status?: 409 | 423;
}

const REASONS = { 409: 'Conflict', 423: 'Locked' } as const;

/**
 * An HTTP exception filter answering a `LockTimeoutError` (a `@WithLock`
 * method, or any lock call, that ran out of `waitMs`) with 409 or 423 instead
 * of Nest's 500. The body names no lock (names often carry ids):
 * `{ statusCode, error, message }`. Every other error goes on to Nest's own
 * handling. HTTP applications only (Express or Fastify).
 *
 * ```ts
 * app.useGlobalFilters(new LockTimeoutFilter({ status: 423 }, app.getHttpAdapter()));
 * ```
 */
@Catch(LockTimeoutError)
export class LockTimeoutFilter extends BaseExceptionFilter {
  /** The status this filter answers with. */
  readonly status: 409 | 423;

  /**
   * `applicationRef` is the HTTP adapter (`app.getHttpAdapter()`); leave it
   * out when Nest creates the filter (`{ provide: APP_FILTER, useClass: LockTimeoutFilter }`).
   */
  constructor(options?: LockTimeoutFilterOptions, applicationRef?: HttpServer) {
    super(applicationRef);
    const status = options?.status ?? 409;
    if (status !== 409 && status !== 423) {
      throw new InvalidArgumentError(`Expected \`status\` to be one of 409, 423, got \`${String(status)}\``);
    }
    this.status = status;
  }

  /** Answers the request with `status`. */
  override catch(error: LockTimeoutError, host: ArgumentsHost): void {
    const body = { statusCode: this.status, error: REASONS[this.status], message: 'The resource is busy: try again later' };
    super.catch(new HttpException(body, this.status, { cause: error }), host);
  }
}
