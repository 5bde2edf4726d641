/**
 * Local supervision (issue 36, item 7; docs/adr/0041): under `npm start`'s launcher
 * (scripts/start-services.js) a service killed with SIGKILL is started again and answers its
 * readiness probe within 10 s, the console says so, and Ctrl-C (SIGTERM here) stops everything
 * without a restart.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

import { waitFor } from '../support/wait';

jest.setTimeout(300_000);

const BASE = 7900;
const QUERY_URL = `http://127.0.0.1:${BASE + 5}`;
const ready = (url: string) =>
  fetch(`${url}/health/ready`).then(
    (r) => r.ok,
    () => false,
  );

describe('npm start supervises its services', () => {
  let launcher: ChildProcess;
  let stdout = '';
  let stderr = '';
  const exited = () =>
    new Promise<number | null>((resolve) => {
      if (launcher.exitCode !== null) resolve(launcher.exitCode);
      else launcher.once('exit', (code) => resolve(code));
    });

  beforeAll(async () => {
    launcher = spawn(process.execPath, [join(__dirname, '../../scripts/start-services.js')], {
      env: { ...process.env, KB_SERVICES_PORT_BASE: String(BASE) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    launcher.stdout!.on('data', (data: Buffer) => (stdout += data.toString()));
    launcher.stderr!.on('data', (data: Buffer) => (stderr += data.toString()));
    await waitFor(() => Promise.resolve(stdout.includes('All services ready')), Boolean, 240_000);
  });

  afterAll(async () => {
    if (launcher.exitCode === null) {
      launcher.kill('SIGTERM');
      await exited();
    }
  });

  const pidOf = (service: string) => {
    const rows = stdout.match(new RegExp(`^  ${service} .* pid (\\d+)$`, 'm'));
    return Number(rows?.[1]);
  };

  it('restarts query-service after kill -9, ready again within 10 s, and says so', async () => {
    const pid = pidOf('query-service');
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    const killedAt = Date.now();
    const said = 'query-service exited (signal SIGKILL); restarting in';
    await waitFor(() => Promise.resolve(stderr.includes(said)), Boolean, 5_000);
    await waitFor(() => ready(QUERY_URL), Boolean, 10_000);
    const healedMs = Date.now() - killedAt;
    process.stdout.write(`query-service healed ${healedMs} ms after kill -9\n`);
    expect(healedMs).toBeLessThanOrEqual(10_000);
    expect(stderr).toMatch(/query-service restarted \(pid (\d+)\)/);
    expect(Number(/query-service restarted \(pid (\d+)\)/.exec(stderr)![1])).not.toBe(pid);
  });

  it('stops every service on SIGTERM, with no restart', async () => {
    launcher.kill('SIGTERM');
    expect(await exited()).toBe(0);
    expect(stderr.match(/restarting in/g)).toHaveLength(1); // the kill -9 above only
    expect(await ready(QUERY_URL)).toBe(false);
    expect(await ready(`http://127.0.0.1:${BASE + 1}`)).toBe(false);
  });
});
