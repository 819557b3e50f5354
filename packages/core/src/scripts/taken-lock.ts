/**
 * The string lock the mutex's take.lua writes for a free lock's first hold,
 * `<owner>@<request id>|<token>` (see _taken-lock.lua, its Lua twin): built
 * here for the scripts the client sends, read here for whoever shows a lock
 * (the CLI, the tests). Neither an owner id nor a request id holds '@' or '|'.
 */

/** The string lock but its token: what take.lua is sent, in one element. */
export function takenPrefix(owner: string, requestId: string): string {
  return `${owner}@${requestId}|`;
}

/**
 * The string lock take.lua wrote for a grant of `token`: what its release
 * (release-taken.lua) compares with the key's value. A safe integer prints
 * every digit here and in the script alike.
 */
export function takenLock(owner: string, requestId: string, token: number): string {
  return takenPrefix(owner, requestId) + token;
}

const TAKEN_LOCK = /^([^@|]+)@([^@|]*)\|(\d+)$/;

/**
 * A string lock as the fields of the hash it stands for (owner → '1',
 * `'@' + request id` → token, see _lock-state.lua); undefined for a string of
 * any other layout (data holdfast did not write).
 */
export function takenLockFields(value: string): Record<string, string> | undefined {
  const m = TAKEN_LOCK.exec(value);
  return m ? { [m[1]!]: '1', [`@${m[2]!}`]: m[3]! } : undefined;
}
