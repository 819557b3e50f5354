import { RedisUnreachableError } from '../errors/errors.js';
import type { PortEvent } from './port.js';

/**
 * Connection events as far as the calls' outcomes show them, for a client
 * that emits none holdfast can listen to (GLIDE has none; Bun's `RedisClient`
 * has one `onconnect`/`onclose` slot each, the application's to set):
 * `close` when a call fails with the connection, `ready` at the next reply,
 * `end` when a call finds the client closed for good. A loss no call met
 * goes unseen (the server check reruns after a counted loss only).
 * `isConnectionFailure` is the client's own classification.
 */
export function callEvents(isConnectionFailure: (error: Error) => boolean) {
  const listeners = new Map<PortEvent, (() => void)[]>();
  let lost = false;
  let ended = false;
  const emit = (event: PortEvent) => {
    for (const listener of [...(listeners.get(event) ?? [])]) listener();
  };
  const closed = () => {
    if (ended) return;
    ended = true;
    emit('end');
  };
  return {
    emit,
    on: (event: PortEvent, listener: () => void) => void listeners.set(event, [...(listeners.get(event) ?? []), listener]),
    off: (event: PortEvent, listener: () => void) => {
      const list = listeners.get(event);
      const at = list?.lastIndexOf(listener) ?? -1;
      if (at >= 0) list!.splice(at, 1);
    },
    /** A reply came: the connection works (again; a client the application connected again after `end` too). */
    answered: () => {
      ended = false;
      if (!lost) return;
      lost = false;
      emit('ready');
    },
    /** A call failed: a lost connection is a `close`, a closed client an `end` (each once). */
    failed: (error: unknown) => {
      if (error instanceof Error && isConnectionFailure(error) && !lost) {
        lost = true;
        emit('close');
      } else if (error instanceof RedisUnreachableError && error.status === 'end') closed();
    },
    /** The application closed the client (seen by a call or by status()): `end`, once. */
    closed,
    /** True once `end` was reported. */
    ended: () => ended,
  };
}
