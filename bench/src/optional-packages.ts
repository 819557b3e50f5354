/**
 * @holdfast/watchdog and @holdfast/redlock are optional here: the bench reports what it can measure and says
 * why a row is missing rather than failing the whole run when one of them is not built or lacks an export.
 */

export interface Optional<T> {
  readonly value: T | undefined;
  readonly note: string | undefined;
}

async function importBuilt(specifier: string): Promise<Record<string, unknown> | string> {
  try {
    // A computed specifier keeps the type checker from requiring the package to be built.
    return (await import(specifier)) as Record<string, unknown>;
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    return `${specifier} could not be loaded (not built yet? run \`pnpm build\`): ${message}`;
  }
}

export async function loadExport<T>(specifier: string, name: string): Promise<Optional<T>> {
  const loaded = await importBuilt(specifier);
  if (typeof loaded === 'string') return { value: undefined, note: loaded };
  const value = loaded[name];
  if (typeof value !== 'function') return { value: undefined, note: `${specifier} does not export ${name}` };
  return { value: value as T, note: undefined };
}
