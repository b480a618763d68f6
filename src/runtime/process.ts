/**
 * Whether no process has this pid on this host (signal 0 checks without sending anything).
 * The pipeline lock, sync runs and webhook leases use it to take over from a killed process
 * at once instead of waiting for its heartbeat or lease to lapse.
 */
export function processIsGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
