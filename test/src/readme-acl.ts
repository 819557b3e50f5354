import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The `ACL SETUSER …` line a package README documents, as arguments for
 * `ACL SETUSER` (without those two words): tests grant exactly what the
 * README tells users to grant, so the two cannot drift apart.
 */
export function readmeAcl(packageDir: 'core' | 'watchdog' | 'redlock'): string[] {
  const readme = readFileSync(`${root}packages/${packageDir}/README.md`, 'utf8');
  const line = /^\s*ACL SETUSER (.+)$/m.exec(readme)?.[1];
  if (!line) throw new Error(`packages/${packageDir}/README.md documents no ACL SETUSER line`);
  return line.trim().split(/\s+/);
}
