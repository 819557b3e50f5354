import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Runs `node ...flags --expose-gc script ...args` under `valgrind --tool=callgrind` and returns
 * the instructions it executed (callgrind's "Collected" total). The default flag,
 * `--single-threaded`, keeps V8's compilation and GC on the main thread, so the count is the
 * process's whole user-space work; `--expose-gc` lets a script collect at the edges of what it
 * measures. The dump goes to `outFile` (`/dev/null` unless it is to be kept for
 * `callgrind_annotate`). Plain JavaScript, so scripts run without a TypeScript loader can use it
 * (scripts/redlock-warmup.mjs).
 *
 * @param {string} script
 * @param {readonly string[]} args
 * @param {string} [outFile]
 * @param {readonly string[]} [flags]
 * @returns {Promise<number>}
 */
export async function countNodeInstructions(script, args, outFile = '/dev/null', flags = ['--single-threaded']) {
  const { stderr } = await run(
    'valgrind',
    ['--tool=callgrind', `--callgrind-out-file=${outFile}`, process.execPath, ...flags, '--expose-gc', script, ...args],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const match = /Collected : (\d+)/.exec(stderr);
  if (!match) throw new Error(`callgrind printed no count for ${script} ${args.join(' ')}: ${stderr.slice(-500)}`);
  return Number(match[1]);
}
