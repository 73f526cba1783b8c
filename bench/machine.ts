import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';

/**
 * What the benchmarks need of the machine and of their child processes: the CPU times of all CPUs (Linux
 * /proc/stat), the share stolen by the hypervisor, a wait for a quiet machine, and a question to a child over
 * IPC. Shared by bench/sponsor.ts and bench/quote.ts.
 */

/** Jiffies of all CPUs since boot (/proc/stat's first line; undefined elsewhere). */
export interface CpuTimes {
  readonly idle: number;
  readonly steal: number;
  readonly total: number;
}

export function cpuTimes(): CpuTimes | undefined {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already counted in user)
    return { idle: (f[3] ?? 0) + (f[4] ?? 0), steal: f[7] ?? 0, total: f.slice(0, 8).reduce((a, b) => a + b, 0) };
  } catch {
    return undefined;
  }
}

/**
 * The share of an interval in which the hypervisor ran something else on our vCPUs (steal). On the VMs these
 * benchmarks were written on it was 1-5 % idle and up to 55 % under load: nothing of ours runs then, so a
 * latency percentile of that interval measures the host, not the service. Printed next to every measurement.
 */
export const stealShare = (a: CpuTimes | undefined, b: CpuTimes | undefined): number | undefined =>
  a === undefined || b === undefined || b.total === a.total ? undefined : (b.steal - a.steal) / (b.total - a.total);

export const stealText = (share: number | undefined) =>
  share === undefined ? '' : `  steal ${(100 * share).toFixed(0)} %`;

/** Busy fraction of all CPUs over `ms`, steal included. */
export async function machineBusy(ms: number): Promise<number | undefined> {
  const a = cpuTimes();
  await new Promise((r) => setTimeout(r, ms));
  const b = cpuTimes();
  if (a === undefined || b === undefined || b.total === a.total) return undefined;
  return 1 - (b.idle - a.idle) / (b.total - a.total);
}

/**
 * CPU time per request is only comparable on an otherwise idle machine: on a small VM, other processes (a test
 * run, a compiler) inflate it through shared caches and vCPU contention. `wait()` waits up to 30 s for the
 * machine to be quiet (< 10 % busy, our idle children included); `warnings` counts the waits that gave up.
 */
export function quietMachine(): { wait(): Promise<void>; readonly warnings: number } {
  let warnings = 0;
  return {
    async wait() {
      for (let waited = 0; waited < 60; waited++) {
        const busy = await machineBusy(500);
        if (busy === undefined || busy < 0.1) return;
      }
      warnings++;
    },
    get warnings() {
      return warnings;
    },
  };
}

/** Sends a message to a child process and returns its next message. */
export async function ask<T>(child: ChildProcess, msg: unknown): Promise<T> {
  child.send(msg as string);
  const [answer] = (await once(child, 'message')) as [T];
  return answer;
}

/** A child's CPU time (user + system, all its threads), µs; the child answers 'cpu' with process.cpuUsage(). */
export async function childCpuMicros(child: ChildProcess): Promise<number> {
  return (await childCpu(child)).all;
}

/** A child's CPU time, µs: all its threads, and its main thread's (the serving loop; undefined where unread). */
export async function childCpu(child: ChildProcess): Promise<{ all: number; loop: number | undefined }> {
  const { cpu, loop } = await ask<{ cpu: NodeJS.CpuUsage; loop?: number }>(child, 'cpu');
  return { all: cpu.user + cpu.system, loop };
}
