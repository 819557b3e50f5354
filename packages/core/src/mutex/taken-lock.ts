/**
 * The string lock take.lua writes for a free lock's first hold is
 * `<owner>@<request id>|<token>` (_taken-lock.lua, its Lua twin). This is its
 * start, what take.lua is sent. Neither an owner id nor a request id holds '@' or '|'.
 */
export function takenPrefix(owner: string, requestId: string): string {
  return `${owner}@${requestId}|`;
}

const TAKEN_LOCK = /^([^@|]+)@([^@|]*)\|(\d+)$/;

/**
 * A string lock as the fields of the hash it stands for (owner → '1',
 * `'@' + request id` → token, see _lock-state.lua), for whoever shows a lock;
 * undefined for a string of any other layout (data holdfast did not write).
 */
export function takenLockFields(value: string): Record<string, string> | undefined {
  const m = TAKEN_LOCK.exec(value);
  return m ? { [m[1]!]: '1', [`@${m[2]!}`]: m[3]! } : undefined;
}
