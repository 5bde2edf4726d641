// Local supervision for `npm start` (docs/adr/0041): a service that exits without being asked is
// started again after a backoff, and the console says which one, how it ended and when it comes
// back. The waits follow the services' one backoff rule (@kb/timing: 0.5 s doubling to 30 s,
// equal jitter); a service that stayed up for a minute starts counting from one again.
'use strict';
const { backoffDelay } = require('@kb/timing');

const { startService } = require('./services');

const RESTART_POLICY = { initialMs: 500, maxMs: 30_000 };
/** Up this long, a service's next crash counts as its first again. */
const STABLE_MS = 60_000;

/**
 * Starts `names` with `options` (as startService) and keeps them running until `stop()`.
 * `say(line)` gets one line per crash and restart. `procs()` lists the current processes (a
 * restarted service's entry is replaced), for waitReady and stopServices.
 */
function supervise(names, options, { say, random = Math.random, now = Date.now } = {}) {
  const entries = new Map();
  let stopping = false;

  const launch = (name) => {
    const proc = startService(name, options);
    const entry = entries.get(name) ?? { failures: 0, timer: undefined };
    entry.proc = proc;
    entry.startedAt = now();
    entries.set(name, entry);
    proc.child.once('exit', (code, signal) => {
      if (stopping) return;
      if (now() - entry.startedAt >= STABLE_MS) entry.failures = 0;
      entry.failures += 1;
      const delay = backoffDelay(entry.failures, RESTART_POLICY, random);
      const how = signal ? `signal ${signal}` : `code ${code}`;
      say(`${name} exited (${how}); restarting in ${delay} ms (restart ${entry.failures})`);
      entry.timer = setTimeout(() => {
        entry.timer = undefined;
        if (stopping) return;
        launch(name);
        say(`${name} restarted (pid ${entry.proc.child.pid})`);
      }, delay);
    });
    return proc;
  };

  for (const name of names) launch(name);
  return {
    procs: () => [...entries.values()].map((e) => e.proc),
    /** Ends supervision: no restart from here on (a pending one is cancelled). */
    stop() {
      stopping = true;
      for (const entry of entries.values()) clearTimeout(entry.timer);
    },
  };
}

module.exports = { supervise, RESTART_POLICY, STABLE_MS };
