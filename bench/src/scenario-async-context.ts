import type { AsyncContextState, FromAsyncContextChild, ToAsyncContextChild } from './async-context-child.js';
import { forkScript, waitExit } from './processes.js';
import { median, spreadPct } from './stats.js';

/** What holdfast's use of AsyncLocalStorage costs code that has nothing to do with locks. */

const CHILD = new URL('./async-context-child.ts', import.meta.url);
const STATES: readonly AsyncContextState[] = ['none', 'acquire', 'withLock', 'insideWithLock'];

export const ASYNC_CONTEXT_LABELS: Record<AsyncContextState, string> = {
  none: 'holdfast not loaded',
  acquire: 'holdfast loaded, acquire() + release() used',
  withLock: 'holdfast withLock() used before the loop',
  insideWithLock: 'loop inside a withLock() callback',
};

export interface AsyncContextResult {
  readonly state: AsyncContextState;
  readonly label: string;
  readonly wallMs: number;
  readonly cpuMs: number;
  /** Loop CPU over the `none` state's in the same round; median over the rounds. */
  readonly cpuRatio: number;
  readonly wallRatio: number;
  /** Spread of the CPU ratio between rounds, %. */
  readonly spreadPct: number;
  readonly rounds: { wallMs: number; cpuMs: number }[];
}

async function runChild(message: ToAsyncContextChild): Promise<FromAsyncContextChild> {
  const child = forkScript(CHILD);
  try {
    const reply = new Promise<FromAsyncContextChild>((resolve, reject) => {
      child.once('message', (m: FromAsyncContextChild) => resolve(m));
      child.once('exit', (code) => reject(new Error(`async-context child exited with ${code}`)));
    });
    child.send(message);
    const result = await reply;
    if (result.error) throw new Error(`async-context child (${message.state}): ${result.error}`);
    return result;
  } finally {
    await waitExit(child, 5000);
  }
}

export async function runAsyncContext(
  port: number,
  opts: { iterations: number; rounds: number; log: (line: string) => void },
): Promise<AsyncContextResult[]> {
  const perRound: Map<AsyncContextState, FromAsyncContextChild>[] = [];
  for (let r = 0; r < opts.rounds; r++) {
    const round = new Map<AsyncContextState, FromAsyncContextChild>();
    for (let k = 0; k < STATES.length; k++) {
      const state = STATES[(k + r) % STATES.length]!;
      round.set(state, await runChild({ state, port, iterations: opts.iterations }));
    }
    perRound.push(round);
    const none = round.get('none')!;
    opts.log(
      `  round ${r + 1}: ` +
        STATES.map((s) => `${s} ${round.get(s)!.cpuMs.toFixed(0)} ms CPU (×${(round.get(s)!.cpuMs / none.cpuMs).toFixed(2)})`).join(', '),
    );
  }
  return STATES.map((state) => {
    const rounds = perRound.map((round) => round.get(state)!);
    const cpuRatios = perRound.map((round) => round.get(state)!.cpuMs / round.get('none')!.cpuMs);
    return {
      state,
      label: ASYNC_CONTEXT_LABELS[state],
      wallMs: median(rounds.map((x) => x.wallMs)),
      cpuMs: median(rounds.map((x) => x.cpuMs)),
      cpuRatio: median(cpuRatios),
      wallRatio: median(perRound.map((round) => round.get(state)!.wallMs / round.get('none')!.wallMs)),
      spreadPct: spreadPct(cpuRatios),
      rounds: rounds.map((x) => ({ wallMs: x.wallMs, cpuMs: x.cpuMs })),
    };
  });
}
