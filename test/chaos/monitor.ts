import type { Redis } from 'ioredis';

/** One command as the server applied it (MONITOR order is apply order). */
export interface AppliedCommand {
  /** Server wall-clock time, ms. */
  timeMs: number;
  args: string[];
}

export interface CommandLog {
  readonly commands: AppliedCommand[];
  stop(): void;
}

/** Records every command the server applies, through MONITOR on a connection of its own. */
export async function monitorCommands(admin: Redis): Promise<CommandLog> {
  // Without CLIENT SETINFO in the connection's handshake: ioredis 5.8.2 and later can send it
  // after MONITOR, then read a monitored command as its reply ("Command queue state error").
  const base = admin.duplicate({ disableClientInfo: true, lazyConnect: true });
  const monitor = await base.monitor();
  base.disconnect();
  monitor.on('error', () => {});
  const commands: AppliedCommand[] = [];
  monitor.on('monitor', (time: string, args: string[]) => {
    commands.push({ timeMs: Number(time) * 1000, args });
  });
  return {
    commands,
    stop: () => monitor.disconnect(),
  };
}
