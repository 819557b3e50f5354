export type RedisBackend = 'env' | 'container' | 'spawn';

const RUNTIME_PROBE_TIMEOUT_MS = 2000;

let cached: Promise<RedisBackend> | undefined;

/**
 * Picks where the shared Redis comes from. REDIS_URL wins so CI can point the
 * suite at a service container; otherwise a container runtime is preferred
 * (isolated, matches production images); a local redis-server binary is the
 * fallback that always works on a dev box.
 */
export function detectBackend(): Promise<RedisBackend> {
  cached ??= probe();
  return cached;
}

async function probe(): Promise<RedisBackend> {
  if (process.env.REDIS_URL) return 'env';
  return (await containerRuntimeAvailable()) ? 'container' : 'spawn';
}

async function containerRuntimeAvailable(): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    // Imported lazily: testcontainers is heavy and only needed for this probe
    // and the container backend.
    const { getContainerRuntimeClient } = await import('testcontainers');
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), RUNTIME_PROBE_TIMEOUT_MS);
      // A hung docker socket must not keep the test process alive.
      timer.unref();
    });
    const answer = getContainerRuntimeClient().then(
      () => true,
      () => false,
    );
    return await Promise.race([answer, timeout]);
  } catch {
    return false;
  } finally {
    if (timer) clearTimeout(timer);
  }
}
