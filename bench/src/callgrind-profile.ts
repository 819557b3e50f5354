import { readFileSync } from 'node:fs';

/**
 * Reads the part of a callgrind output file the server-instruction bench needs: the total instructions of the
 * dump and every call edge (caller, callee, calls, inclusive instructions).
 */

export interface CallEdge {
  readonly caller: string;
  readonly callee: string;
  calls: number;
  /** Instructions of the callee and everything it called, for these calls. */
  ir: number;
}

export interface Profile {
  /** Instructions collected in the dump. */
  total: number;
  /** Call edges, keyed `caller\u0000callee`, summed over dumps. */
  readonly edges: Map<string, CallEdge>;
}

export function emptyProfile(): Profile {
  return { total: 0, edges: new Map() };
}

/** Adds `b` into `a`. */
export function addProfile(a: Profile, b: Profile): Profile {
  a.total += b.total;
  for (const [key, edge] of b.edges) {
    const mine = a.edges.get(key);
    if (mine) {
      mine.calls += edge.calls;
      mine.ir += edge.ir;
    } else a.edges.set(key, { ...edge });
  }
  return a;
}

/** `call'2'scriptCall` → { base: 'call', caller: 'scriptCall' }. */
export function splitName(name: string): { base: string; caller: string | undefined } {
  const [base, ...rest] = name.split("'");
  return { base: base!, caller: rest.find((part) => !/^\d+$/.test(part)) };
}

export function parseCallgrind(file: string): Profile {
  const text = readFileSync(file, 'utf8');
  const names = new Map<string, string>();
  const profile = emptyProfile();
  const nameOf = (spec: string): string => {
    const m = /^\((\d+)\)(?:\s(.*))?$/.exec(spec);
    if (!m) return spec;
    if (m[2] !== undefined) names.set(m[1]!, m[2]);
    return names.get(m[1]!) ?? spec;
  };
  let fn = '';
  let callee = '';
  let pendingCalls = -1;
  let totals = Number.NaN;
  let summary = Number.NaN;
  for (const line of text.split('\n')) {
    if (line.startsWith('fn=')) fn = nameOf(line.slice(3));
    else if (line.startsWith('cfn=')) callee = nameOf(line.slice(4));
    else if (line.startsWith('calls=')) pendingCalls = Number(line.slice(6).split(' ')[0]);
    else if (line.startsWith('totals:')) totals = Number(line.slice(7).trim());
    else if (line.startsWith('summary:')) summary = Number(line.slice(8).trim());
    else if (pendingCalls >= 0 && /^[\d+*-]/.test(line)) {
      // The cost line right after `calls=`: position, then the inclusive Ir of those calls.
      const ir = Number(line.trim().split(/\s+/)[1] ?? 0);
      const key = `${fn}\u0000${callee}`;
      const edge = profile.edges.get(key);
      if (edge) {
        edge.calls += pendingCalls;
        edge.ir += ir;
      } else profile.edges.set(key, { caller: fn, callee, calls: pendingCalls, ir });
      pendingCalls = -1;
    }
  }
  profile.total = Number.isNaN(totals) ? summary : totals;
  if (Number.isNaN(profile.total)) throw new Error(`${file}: no totals in the callgrind output`);
  return profile;
}

/** Sum of every edge whose callee and caller match. */
export function calledCost(profile: Profile, match: (edge: CallEdge) => boolean): { calls: number; ir: number } {
  let calls = 0;
  let ir = 0;
  for (const edge of profile.edges.values()) {
    if (match(edge)) {
      calls += edge.calls;
      ir += edge.ir;
    }
  }
  return { calls, ir };
}
