/** The part of node-redis's client, Cluster and Sentinel API the port uses (structural: no import of node-redis). */

export type Listener = (...args: any[]) => void;
export type PubSubListener = (message: string, channel: string) => void;

/** The node-redis members this adapter calls, common to a client, a Cluster and a Sentinel. */
export interface Common {
  readonly isOpen: boolean;
  on(event: string, listener: Listener): unknown;
  listenerCount(event: string): number;
  off(event: string, listener: Listener): unknown;
  sSubscribe(channels: string, listener: PubSubListener): Promise<unknown>;
  sUnsubscribe(channels: string, listener?: PubSubListener): Promise<unknown>;
  subscribe(channels: string, listener: PubSubListener): Promise<unknown>;
  unsubscribe(channels: string, listener?: PubSubListener): Promise<unknown>;
}
export interface Client extends Common {
  readonly isReady: boolean;
  sendCommand(args: string[]): Promise<unknown>;
  duplicate(): Client;
  connect(): Promise<unknown>;
  destroy?(): unknown;
  disconnect?(): Promise<unknown>;
}
interface ClusterNode {
  readonly address: string;
  /** Its connection, once node-redis made one. */
  readonly client?: { readonly isReady: boolean };
}
export interface Cluster extends Common {
  sendCommand(firstKey: string | undefined, isReadonly: boolean, args: string[]): Promise<unknown>;
  getSlotMaster(slot: number): ClusterNode | undefined;
  readonly masters: readonly ClusterNode[];
  nodeClient(node: ClusterNode): Client | Promise<Client>;
  duplicate(): Cluster;
  connect(): Promise<unknown>;
  destroy?(): unknown;
  disconnect?(): Promise<unknown>;
}
export interface Sentinel extends Common {
  readonly isReady: boolean;
  sendCommand(isReadonly: boolean, args: string[]): Promise<unknown>;
  use<T>(fn: (client: { sendCommand(isReadonly: boolean, args: string[]): Promise<unknown> }) => Promise<T>): Promise<T>;
  getMasterNode(): { host: string; port: number } | undefined;
}

