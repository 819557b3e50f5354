import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Runs `node ...flags --expose-gc script ...args` under `valgrind --tool=callgrind` and returns the
 * instructions it executed (callgrind's "Collected" total).
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
