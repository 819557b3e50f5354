import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { LockClient } from '@holdfast/core';
import { CliError, EXIT, cliErrorOf } from './cli-error.js';
import { connect, type Client } from './connect.js';
import { inboxTable, readInbox } from './inbox-state.js';
import { describe, json, lockTable, message, messageLine } from './render.js';
import { namesOf, readState, snapshot, type LockState, type SyncKind } from './snapshot.js';
import { SYNC_KINDS } from './state-keys.js';
import { watch, type Screen } from './watch.js';

/** What the command reads and writes: the process's streams, or a test's. */
export interface Io {
  /** Standard output. */
  readonly stdout: Screen;
  /** Standard error. */
  readonly stderr: {
    /** Writes text. */
    write(text: string): unknown;
  };
  /** Standard input, for the confirmation of `release`. */
  readonly stdin: NodeJS.ReadableStream & {
    /** True for a terminal. */
    isTTY?: boolean;
  };
  /** The environment (`REDIS_URL`, `HOLDFAST_PREFIX`, `REDIS_PASSWORD`). */
  readonly env: Record<string, string | undefined>;
  /** Aborted on SIGINT: ends `watch`. */
  readonly signal: AbortSignal;
}

/** The text of `holdfast --help`. */
export const USAGE = `Usage: holdfast <command> [options]

Commands:
  ls [pattern]              every held lock, read-write lock, semaphore and election, every latch
                            still counting, every barrier with parties waiting, every idempotency
                            key and flight running or stored (pattern: a glob on names)
  inspect <name>            one lock in full, its waiter queue in order (a latch: its count;
                            a barrier: its parties, generation and waiting parties; an idempotency
                            key, named <name>:<request key>, or a flight: its state and token)
  watch [pattern]           the ls table, refreshed live, with hand-offs/s and lost leases
  release <name> --force    free a lock whoever holds it and wake the next waiter
  inbox <name>              the keys of an inbox with pending messages: how many, the processor's
                            token and lease left, the oldest message's age

Options:
  --url <url>               redis:// or rediss:// URL (default: $REDIS_URL, else redis://127.0.0.1:6379)
  --prefix <prefix>         the LockClient prefix (default: $HOLDFAST_PREFIX, else holdfast)
  --cluster                 connect to a Redis Cluster (the URL names one node)
  --user <name>             ACL user (default: the URL's)
  --password <password>     password (default: $REDIS_PASSWORD, else the URL's)
  --tls                     use TLS (implied by rediss://)
  --tls-ca <file>           PEM certificate authority to trust
  --tls-cert <file>         PEM client certificate
  --tls-key <file>          PEM key of the client certificate
  --tls-insecure            accept any server certificate
  --json                    JSON instead of a table (ls, inspect, inbox)
  --kind <kind>             lock, rwlock, semaphore, election, latch, barrier, idempotency or
                            single-flight, when a name is several (inspect, release)
  --yes                     do not ask for confirmation (release)
  --interval <ms>           refresh period of watch (default 1000)
  --iterations <n>          stop watch after n refreshes
  --once                    watch: one refresh (--iterations 1)
  -h, --help                this text

Exit codes: 0 done, 1 failed, 2 usage, 3 nothing found, 4 Redis unreachable,
5 access denied, 6 release not confirmed, 7 not a lock (data holdfast did not write).`;

const OPTIONS = {
  url: { type: 'string' },
  prefix: { type: 'string' },
  cluster: { type: 'boolean' },
  user: { type: 'string' },
  password: { type: 'string' },
  tls: { type: 'boolean' },
  'tls-ca': { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'tls-insecure': { type: 'boolean' },
  json: { type: 'boolean' },
  kind: { type: 'string' },
  force: { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  interval: { type: 'string' },
  iterations: { type: 'string' },
  once: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = { -readonly [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'string' ? string : boolean };

const HELP_HINT = 'Run `holdfast --help` for the commands and options.';

/**
 * The options and positionals of a command line. Parsed leniently, then checked
 * here token by token: parseArgs's own errors run to several lines, and a usage
 * error is one (`holdfast: …`, exit 2).
 */
function parse(argv: readonly string[]): { values: Values; positionals: string[] } {
  const { values, positionals, tokens } = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: false, tokens: true });
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const option = (OPTIONS as Record<string, { type: 'string' | 'boolean' }>)[token.name];
    if (!option) throw new CliError(EXIT.usage, `Unknown option \`${token.rawName}\`. ${HELP_HINT}`);
    if (option.type === 'string' && token.value === undefined) throw new CliError(EXIT.usage, `Option \`${token.rawName}\` needs a value. ${HELP_HINT}`);
    if (option.type === 'boolean' && token.value !== undefined) throw new CliError(EXIT.usage, `Option \`${token.rawName}\` takes no value. ${HELP_HINT}`);
  }
  return { values: values as Values, positionals };
}

function positiveInteger(what: string, value: string | undefined, fallback?: number): number | undefined {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new CliError(EXIT.usage, `Expected \`--${what}\` to be a positive integer, got \`${value}\``);
  return n;
}

/** Runs one command line; returns the exit code (never throws). */
export async function run(argv: readonly string[], io: Io): Promise<number> {
  let redis: Client | undefined;
  try {
    const { values, positionals } = parse(argv);
    const [command, ...args] = positionals;
    if (values.help) {
      io.stdout.write(`${USAGE}\n`);
      return EXIT.ok;
    }
    if (command === undefined) throw new CliError(EXIT.usage, `Expected a command: ls, inspect, watch, release or inbox. ${HELP_HINT}`);
    const handler = COMMANDS[command];
    if (!handler) throw new CliError(EXIT.usage, `Unknown command \`${command}\`. ${HELP_HINT}`);
    const prefix = values.prefix ?? io.env['HOLDFAST_PREFIX'] ?? 'holdfast';
    const checked = handler.check(args, values);
    redis = await connect({
      url: values.url ?? io.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379',
      cluster: values.cluster ?? false,
      user: values.user,
      password: values.password ?? io.env['REDIS_PASSWORD'],
      tls: values.tls ?? false,
      tlsCa: values['tls-ca'],
      tlsCert: values['tls-cert'],
      tlsKey: values['tls-key'],
      tlsInsecure: values['tls-insecure'] ?? false,
    });
    return await handler.run({ redis, prefix, values, io, ...checked });
  } catch (error) {
    const failure = cliErrorOf(error);
    io.stderr.write(messageLine(`holdfast: ${failure.message}`));
    return failure.exitCode;
  } finally {
    redis?.disconnect();
  }
}

interface Context {
  readonly redis: Client;
  readonly prefix: string;
  readonly values: Values;
  readonly io: Io;
  readonly name?: string;
  readonly pattern?: string | undefined;
}

interface Command {
  /** Checks the arguments before connecting. */
  check(args: readonly string[], values: Values): { name?: string; pattern?: string | undefined };
  run(context: Context): Promise<number>;
}

const optionalPattern = (command: string) => (args: readonly string[]) => {
  if (args.length > 1) throw new CliError(EXIT.usage, `\`holdfast ${command}\` takes at most one pattern`);
  return { pattern: args[0] };
};

const oneName = (command: string) => (args: readonly string[]) => {
  if (args.length !== 1) throw new CliError(EXIT.usage, `\`holdfast ${command}\` takes one lock name`);
  return { name: args[0]! };
};

const nothingHeld = (prefix: string, pattern: string | undefined) =>
  `Nothing held under prefix \`${prefix}\`${pattern === undefined ? '' : ` matching \`${pattern}\``}`;

/** The name argument of `inspect` and `release`, and a valid `--kind`. */
const oneNameOfKind = (command: string) => (args: readonly string[], values: Values) => {
  const kind = values.kind;
  if (kind !== undefined && !(SYNC_KINDS as readonly string[]).includes(kind)) {
    throw new CliError(EXIT.usage, `Expected \`--kind\` to be one of ${SYNC_KINDS.map((k) => `'${k}'`).join(', ')}, got \`${kind}\``);
  }
  return oneName(command)(args);
};

/** The states of `name`: one per kind that has a key of that name (or only `--kind`). */
async function statesOf({ redis, prefix, name, values }: Context): Promise<LockState[]> {
  const wanted = values.kind as SyncKind | undefined;
  const kinds = (await namesOf(redis, prefix, name!)).filter(({ kind }) => wanted === undefined || kind === wanted);
  if (kinds.length === 0) {
    throw new CliError(
      EXIT.notFound,
      `No ${wanted ?? 'lock, read-write lock, semaphore, election, latch, barrier, idempotency key or flight'} named \`${name}\` is held under prefix \`${prefix}\``,
    );
  }
  return Promise.all(kinds.map(({ kind, nameLength }) => readState(redis, prefix, name!, kind, undefined, undefined, nameLength)));
}

const COMMANDS: Record<string, Command> = {
  inbox: {
    check: (args) => {
      if (args.length !== 1) throw new CliError(EXIT.usage, '`holdfast inbox` takes one inbox name');
      return { name: args[0]! };
    },
    async run({ redis, prefix, name, values, io }) {
      const rows = await readInbox(redis, prefix, name!);
      if (values.json) io.stdout.write(json(rows));
      else if (rows.length > 0) io.stdout.write(`${inboxTable(rows)}\n`);
      if (rows.length === 0) {
        io.stderr.write(messageLine(`holdfast: No message pending in inbox \`${name}\` under prefix \`${prefix}\``));
        return EXIT.notFound;
      }
      return EXIT.ok;
    },
  },
  ls: {
    check: optionalPattern('ls'),
    async run({ redis, prefix, pattern, values, io }) {
      const states = await snapshot(redis, prefix, pattern);
      if (values.json) io.stdout.write(json(states));
      else if (states.length > 0) io.stdout.write(`${lockTable(states, io.stdout.isTTY ? io.stdout.columns : undefined)}\n`);
      if (states.length === 0) {
        io.stderr.write(messageLine(`holdfast: ${nothingHeld(prefix, pattern)}`));
        return EXIT.notFound;
      }
      return EXIT.ok;
    },
  },
  inspect: {
    check: oneNameOfKind('inspect'),
    async run(context) {
      const states = await statesOf(context);
      const { io, values } = context;
      if (values.json) io.stdout.write(json(states.length === 1 ? states[0] : states));
      else io.stdout.write(`${states.map(describe).join('\n\n')}\n`);
      if (states.some((state) => state.foreign)) {
        io.stderr.write(messageLine(`holdfast: \`${context.name}\` is not a lock: its key holds data holdfast did not write`));
        return EXIT.notALock;
      }
      return EXIT.ok;
    },
  },
  watch: {
    check: (args, values) => {
      positiveInteger('interval', values.interval);
      positiveInteger('iterations', values.iterations);
      return optionalPattern('watch')(args);
    },
    async run({ redis, prefix, pattern, values, io }) {
      const intervalMs = positiveInteger('interval', values.interval, 1_000)!;
      const iterations = values.once ? 1 : positiveInteger('iterations', values.iterations);
      await watch(redis, prefix, { pattern, intervalMs, iterations, signal: io.signal }, io.stdout);
      return EXIT.ok;
    },
  },
  release: {
    check: (args, values) => {
      if (!values.force) throw new CliError(EXIT.usage, '`holdfast release` frees a lock whoever holds it: say so with `--force`');
      return oneNameOfKind('release')(args, values);
    },
    async run(context) {
      const { redis, prefix, name, values, io } = context;
      const states = await statesOf(context);
      if (states.length > 1) {
        throw new CliError(EXIT.usage, `\`${name}\` is both a ${states.map((s) => s.kind).join(' and a ')}: choose one with \`--kind\``);
      }
      const state = states[0]!;
      if (state.foreign) throw new CliError(EXIT.notALock, `\`${name}\` is not a lock: its key holds data holdfast did not write`);
      if (state.kind === 'latch' || state.kind === 'barrier') {
        throw new CliError(EXIT.usage, `\`${name}\` is a ${state.kind}: nothing is held to release`);
      }
      if (state.kind === 'idempotency' || state.kind === 'single-flight') {
        throw new CliError(EXIT.usage, `\`${name}\` is ${state.kind === 'idempotency' ? 'an idempotency key' : 'a flight'}: its claim is not force-released, it ends with its call or when its lease runs out`);
      }
      if (state.kind === 'semaphore') {
        throw new CliError(EXIT.usage, `\`${name}\` is a semaphore: its permits are not force-released, each holder's lease ends by itself`);
      }
      if (state.kind === 'election') {
        throw new CliError(EXIT.usage, `\`${name}\` is an election: its term is not force-released, it ends when resigned or when it runs out`);
      }
      const holders = state.holders.map((h) => h.client).join(', ') || 'nobody';
      if (!values.yes && !(await confirm(io, `Force-release ${state.kind} \`${name}\` held by ${holders}? [y/N] `))) {
        io.stderr.write(messageLine('holdfast: not released'));
        return EXIT.aborted;
      }
      // The client's own force-release: the same script, and the next waiter is woken.
      const client = new LockClient(redis, { prefix });
      try {
        const removed = await (state.kind === 'lock' ? client.lock(name!) : client.readWriteLock(name!)).forceRelease();
        io.stdout.write(messageLine(removed ? `Released ${state.kind} \`${name}\`` : `\`${name}\` was free already`));
      } finally {
        await client.close();
      }
      return EXIT.ok;
    },
  },
};

/** Asks on the terminal; without one, only `--yes` confirms. */
async function confirm(io: Io, question: string): Promise<boolean> {
  if (!io.stdin.isTTY) {
    throw new CliError(EXIT.aborted, 'No terminal to confirm on: pass `--yes` to force-release from a script');
  }
  const rl = createInterface({ input: io.stdin, output: io.stderr as NodeJS.WritableStream });
  try {
    const answer = await rl.question(message(question));
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
