import type { BuildInfo } from './build-info.js';
import { calledCost, splitName, type Profile } from './callgrind-profile.js';
import { spreadPct, markdownTable } from './stats.js';

/** What the callgrind bench measured, and its markdown (results/callgrind.md). */

export interface CommandCost {
  /** Redis command, e.g. HSET. */
  readonly name: string;
  /** Run by a script (true) or sent by the client (false). */
  readonly inScript: boolean;
  /** Calls and instructions per unit (cycle or call). */
  readonly calls: number;
  readonly ir: number;
}

/** Where one unit's (a cycle's, or one call's) server instructions went. */
export interface Breakdown {
  readonly total: number;
  /** Reading and parsing the request, dispatch, bookkeeping of the client's command, writing the reply. */
  readonly io: number;
  readonly commands: CommandCost[];
  /** Script calls: EVAL / EVALSHA sent by the client. */
  readonly scriptCalls: number;
  /** Inside those: the Lua VM and script set-up (arguments, reply), without the commands it runs nor the GC step. */
  readonly luaVm: number;
  /** Of `luaVm`: running the script's body (lua_pcall), its own allocations and GC work included. */
  readonly luaBody: number;
  /** Lua → Redis for every redis.call/pcall, without the command itself. */
  readonly redisCall: { readonly calls: number; readonly ir: number };
  /** Redis's explicit Lua GC step (every 50th script call). */
  readonly luaGc: number;
}

export interface LibraryCount {
  readonly id: string;
  readonly label: string;
  readonly perCycle: number;
  readonly cycles: Breakdown;
  readonly acquire: Breakdown;
  readonly release: Breakdown;
}

export interface PassCounts {
  readonly redis: string;
  /** Instructions of an empty phase (two markers), subtracted from every phase. */
  readonly markerIr: number;
  readonly empties: number[];
  readonly libraries: LibraryCount[];
}

export interface CallgrindReport {
  readonly date: string;
  readonly build: BuildInfo;
  readonly args: string[];
  readonly redis: string;
  readonly valgrind: string;
  readonly cycles: number;
  readonly perCall: number;
  readonly warmup: number;
  /** Whether Redis's hash seed was fixed (fixed-seed.c), and why not. */
  readonly seed: string;
  readonly passes: PassCounts[];
  readonly durationMs: number;
}

const SCRIPT_COMMANDS = new Set(['evalShaCommand', 'evalCommand', 'evalRoCommand', 'evalShaRoCommand', 'fcallCommand']);

function commandName(fn: string): string {
  return fn.replace(/Command$/, '').toUpperCase();
}

const SCRIPT_COMMAND_NAMES = new Set([...SCRIPT_COMMANDS].map(commandName));

/** Splits a phase's profile into per-unit figures; `markerIr` is what the phase's markers alone cost. */
export function breakdown(profile: Profile, units: number, markerIr: number): Breakdown {
  const byCommand = new Map<string, { name: string; inScript: boolean; calls: number; ir: number }>();
  let outerIr = 0;
  let scriptIr = 0;
  let scriptCalls = 0;
  let innerIr = 0;
  for (const edge of profile.edges.values()) {
    const { base, caller } = splitName(edge.caller);
    if (base !== 'call' || !edge.callee.endsWith('Command') || edge.callee === 'echoCommand') continue;
    const inScript = caller === 'scriptCall';
    const key = `${inScript}:${edge.callee}`;
    const entry = byCommand.get(key) ?? { name: commandName(edge.callee), inScript, calls: 0, ir: 0 };
    entry.calls += edge.calls;
    entry.ir += edge.ir;
    byCommand.set(key, entry);
    if (inScript) innerIr += edge.ir;
    else {
      outerIr += edge.ir;
      if (SCRIPT_COMMANDS.has(edge.callee)) {
        scriptIr += edge.ir;
        scriptCalls += edge.calls;
      }
    }
  }
  // redis.call / redis.pcall: the (static) function that calls scriptCall, with everything under it.
  const bridges = new Set<string>();
  for (const edge of profile.edges.values()) if (splitName(edge.callee).base === 'scriptCall') bridges.add(edge.caller);
  const bridge = calledCost(profile, (e) => bridges.has(e.callee));
  const gc = calledCost(profile, (e) => e.callee === 'lua_gc' && e.caller === 'luaCallFunction');
  const body = calledCost(profile, (e) => e.callee === 'lua_pcall' && e.caller === 'luaCallFunction');
  const total = profile.total - markerIr;
  return {
    total: total / units,
    io: (total - outerIr) / units,
    commands: [...byCommand.values()]
      // The GC step is reported apart; it lands in whichever script call is the 50th.
      .map((c) => ({ ...c, ir: SCRIPT_COMMAND_NAMES.has(c.name) && !c.inScript ? c.ir - (gc.ir * c.calls) / scriptCalls : c.ir }))
      .map((c) => ({ name: c.name, inScript: c.inScript, calls: c.calls / units, ir: c.ir / units }))
      .sort((a, b) => Number(a.inScript) - Number(b.inScript) || b.ir - a.ir),
    scriptCalls: scriptCalls / units,
    luaVm: (scriptIr - bridge.ir - gc.ir) / units,
    luaBody: (body.ir - bridge.ir) / units,
    redisCall: { calls: bridge.calls / units, ir: (bridge.ir - innerIr) / units },
    luaGc: gc.ir / units,
  };
}

const n0 = (v: number) => Math.round(v).toLocaleString('en-US');
const n2 = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(2));

const table = (head: string[], rows: string[][]): string => markdownTable(head, rows).join('\n');

function commandsText(b: Breakdown, inScript: boolean): string {
  return b.commands
    .filter((c) => c.inScript === inScript)
    .map((c) => `${c.name}${c.calls === 1 ? '' : ` ×${n2(c.calls)}`} ${n0(c.ir)}`)
    .join(', ');
}

/** Per-library rows of pass 1 against pass 2, the ratios, and where each call's instructions go. */
export function renderCallgrindMarkdown(report: CallgrindReport): string {
  const [first, second] = report.passes;
  const ids = first!.libraries.map((l) => l.id);
  const perCycle = (pass: PassCounts | undefined, id: string) => pass?.libraries.find((l) => l.id === id)?.perCycle ?? Number.NaN;
  const floor1 = perCycle(first, 'floor');
  const semaphore1 = perCycle(first, 'redis-semaphore');
  const out: string[] = [
    `# holdfast bench: server instructions per uncontended cycle — ${report.date}`,
    '',
    `Redis ${report.redis} under ${report.valgrind} (callgrind), instructions counted while the server reads, runs and answers requests ` +
      `(readQueryFromClient, handleClientsWithPendingWrites); its own timers (cron, expiry) are left out. ` +
      `${report.cycles} acquire + release cycles per library after ${report.warmup} warm-up, then ${report.perCall} cycles call by call. ` +
      `Two passes, each on a fresh server; ${report.seed}. holdfast: commit ${report.build.commit}${report.build.uncommitted.length ? ' (with uncommitted changes)' : ''}. ` +
      `Took ${Math.round(report.durationMs / 1000)} s.`,
    '',
    table(
      ['Library', 'pass 1 / cycle', 'pass 2 / cycle', 'difference', '× floor', '× redis-semaphore', 'script calls / cycle', 'commands in scripts / cycle', 'of which Lua GC step'],
      ids.map((id) => {
        const lib = first!.libraries.find((l) => l.id === id)!;
        const a = lib.perCycle;
        const b = perCycle(second, id);
        const inner = lib.cycles.commands.filter((c) => c.inScript).reduce((n, c) => n + c.calls, 0);
        return [
          lib.label,
          n0(a),
          n0(b),
          `${n0(Math.abs(a - b))} (${spreadPct([a, b]).toFixed(3)} %)`,
          (a / floor1).toFixed(2),
          (a / semaphore1).toFixed(2),
          n2(lib.cycles.scriptCalls),
          n2(inner),
          n0(lib.cycles.luaGc),
        ];
      }),
    ),
    '',
    `Marker cost subtracted (median empty phase): ${n0(first!.markerIr)} / ${n0(second?.markerIr ?? Number.NaN)} instructions; empty phases of pass 1: ${first!.empties.map(n0).join(', ')}.`,
    '',
    '## Per call (pass 1)',
    '',
    'Request I/O: reading and parsing the request, dispatch and bookkeeping of the command the client sent, writing the reply. ' +
      'Lua set-up: finding the script, KEYS and ARGV into Lua, the reply out of it. Lua body: running the script, without the commands it calls (its own allocations and the GC work they cause included). ' +
      'redis.call: the Lua → Redis bridge of those calls, without the command itself. Redis\'s explicit Lua GC step (every 50th script call) is left out here; the first table has it per cycle.',
    '',
    table(
      ['Library', 'call', 'instructions', 'request I/O', 'commands sent', 'Lua set-up', 'Lua body', 'redis.call (n)', 'commands in the script'],
      first!.libraries.flatMap((lib) =>
        (['acquire', 'release'] as const).map((call) => {
          const b = lib[call];
          return [
            lib.label,
            call,
            n0(b.total - b.luaGc),
            n0(b.io),
            commandsText(b, false),
            b.scriptCalls ? n0(b.luaVm - b.luaBody) : '',
            b.scriptCalls ? n0(b.luaBody) : '',
            b.redisCall.calls ? `${n0(b.redisCall.ir)} (${n2(b.redisCall.calls)})` : '',
            commandsText(b, true),
          ];
        }),
      ),
    ),
    '',
    'Commands sent: instructions of the command itself (for EVALSHA, the whole script: Lua, redis.call and the commands in it). Averages over the calls; acquire + release + the Lua GC step come within a few hundred instructions of the per-cycle figure (the per-call phases have a marker between the two calls).',
    '',
  ];
  return out.join('\n');
}
