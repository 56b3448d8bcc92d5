// CPU time from /proc: utime+stime+cutime+cstime, fields 14-17 of
// /proc/<pid>/stat, summed over a set of processes. Robust on a shared machine where rates are not:
// other work slows us down but is not charged to us.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

interface Stat {
  pid: number;
  ppid: number;
  pgrp: number;
  ticks: number;
  /** Of ticks, in the kernel (stime + cstime). */
  system: number;
}

function readStat(pid: number): Stat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // exited between the directory listing and the read
  }
  // The command name (field 2) may hold spaces and parentheses: split after the last ')'.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // f[0] is field 3 (state); field n is f[n - 3].
  const system = Number(f[12]) + Number(f[14]);
  return { pid, ppid: Number(f[1]), pgrp: Number(f[2]), ticks: Number(f[11]) + Number(f[13]) + system, system };
}

function allStats(): Stat[] {
  const out: Stat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = readStat(Number(name));
    if (s) out.push(s);
  }
  return out;
}

/** CPU seconds of every process in process group `pgid` (a detached child and what it spawned). */
export function groupCpuSeconds(pgid: number): number {
  return (
    allStats()
      .filter((s) => s.pgrp === pgid)
      .reduce((n, s) => n + s.ticks, 0) / TICKS_PER_SECOND
  );
}

/** Of groupCpuSeconds, the seconds spent in the kernel (system calls: sockets, memory). */
export function groupSystemSeconds(pgid: number): number {
  return (
    allStats()
      .filter((s) => s.pgrp === pgid)
      .reduce((n, s) => n + s.system, 0) / TICKS_PER_SECOND
  );
}

/** CPU seconds of `root` and all its descendants (PostgreSQL: the postmaster and its backends). */
export function treeCpuSeconds(root: number): number {
  const stats = allStats();
  const children = new Map<number, Stat[]>();
  for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
  let ticks = 0;
  const todo = stats.filter((s) => s.pid === root);
  while (todo.length > 0) {
    const s = todo.pop()!;
    ticks += s.ticks;
    todo.push(...(children.get(s.pid) ?? []));
  }
  return ticks / TICKS_PER_SECOND;
}

/** This process's own CPU seconds (user + system), e.g. pg-boss running in process. */
export function selfCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}
