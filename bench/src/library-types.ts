import type { LockClient } from '@holdfast/core';

/**
 * What every library of the lock scenarios offers the bench: a locker per process (see libraries.ts).
 */
export type Release = () => Promise<void>;

export interface Locker {
  /** Rejects when the library gives up (its own timeout or retry limit). */
  acquire(key: string, signal?: AbortSignal): Promise<Release>;
  close(): Promise<void>;
}

export interface LockLibrary {
  readonly id: string;
  readonly label: string;
  readonly settings: string;
  /** Takes part in the contention runs (the floor does not: it has no wait). */
  readonly contends: boolean;
  open(port: number): Promise<Locker>;
}


/** The client holdfast's renewal rows run on, and how their names tell it apart. */
export interface HoldfastClientOpener {
  /** Added to the row's id (`holdfast:node-redis`); '' for ioredis. */
  readonly idSuffix: string;
  /** Added to the row's label after `holdfast` (` (node-redis 5)`); '' for ioredis. */
  readonly labelSuffix: string;
  /** The client as the settings show it passed to the Watchdog. */
  readonly settingsClient: string;
  /** A connected client, as holdfast takes it, and how to close it once holdfast is closed. */
  open(port: number): Promise<{ readonly client: ConstructorParameters<typeof LockClient>[0]; close(): void }>;
}

