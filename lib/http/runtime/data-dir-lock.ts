// One local server per PGlite data directory: PGlite is a single-process database, and a second
// server opening the same directory would corrupt it. The lock is a file holding the owner's pid;
// a lock whose pid no longer runs was left by a crash (kill -9, power loss) and is taken over.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface DataDirLock {
  /** Set when the lock of a server that no longer runs was taken over. */
  staleOwner?: number;
  release(): void;
}

export class DataDirLocked extends Error {
  override name = 'DataDirLocked';
}

export function lockDataDir(dir: string): DataDirLock {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'server.pid');
  let staleOwner: number | undefined;
  for (;;) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      const release = () => {
        if (ownerOf(path) === process.pid) rmSync(path, { force: true });
      };
      process.once('exit', release);
      return { staleOwner, release };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = ownerOf(path);
    if (owner !== undefined && isRunning(owner)) {
      throw new DataDirLocked(
        `Another queen server (pid ${owner}) is using ${dir}; stop it first, or start this one in another folder or with DATABASE_URL. ` +
          `If no such server runs, delete ${path}.`,
      );
    }
    staleOwner = owner;
    rmSync(path, { force: true });
  }
}

function ownerOf(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

// Our own pid is never a live owner: in a container the restarted server often gets the pid the
// crashed one had.
function isRunning(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
