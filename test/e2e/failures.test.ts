import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import type { FailureGroups, InstanceView } from '../../src/shared/api/index.js';
import { callDaemon, startDaemon, wfxIn } from '../helpers/cli.js';

const CHARGE = '9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d';
const TOTALS = 'a0b1c2d3-e4f5-4a6b-9c7d-8e9f0a1b2c3d';

/** A serviceTask against the partner (BASE), two attempts; a scriptTask that throws. */
const FLOWS = {
  'charge.yaml': `processId: ${CHARGE}
name: Charge
nodes:
  start: { type: startEvent, next: charge }
  charge:
    type: serviceTask
    name: Charge the card
    method: POST
    url: "{env.BASE}/charge"
    retry: { maxAttempts: 2, initialInterval: 10ms }
    next: done
  done: { type: endEvent }
`,
  'totals.yaml': `processId: ${TOTALS}
name: Totals
nodes:
  start: { type: startEvent, next: total }
  total: { type: scriptTask, script: "throw new Error('no lines in order ' + vars.order)", next: done }
  done: { type: endEvent }
`,
};

t.test(
  'failures on a real daemon: grouped by code and node with counts and the newest, listed by node, in the CLI',
  async (t) => {
    // The partner: down, 500 to every call.
    let calls = 0;
    const partner = createServer((_req, res) => {
      calls++;
      res.writeHead(500, { 'content-type': 'text/plain' }).end('partner down');
    });
    partner.listen(0, '127.0.0.1');
    await once(partner, 'listening');
    t.teardown(() => partner.close());
    const base = `http://127.0.0.1:${(partner.address() as AddressInfo).port}`;

    const cwd = t.testdir(FLOWS);
    const info = await startDaemon(t, { cwd });
    const run = (args: string[]) => wfxIn(args, { cwd });
    const key = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
    const api = <T>(path: string) => callDaemon(info.url, key, 'GET', path) as Promise<{ status: number; body: T }>;
    for (const f of Object.keys(FLOWS)) t.equal((await run(['flow', 'publish', f])).code, 0, f);
    t.equal((await run(['env', 'set', 'BASE', base])).code, 0);

    const started = async (flow: string, order: number): Promise<InstanceView> => {
      const res = await run(['run', flow, '--set', `order=${order}`, '--wait', '--json']);
      t.equal(res.code, 1, `${flow} order ${order}: wfx run exits 1 (Failed)`);
      return JSON.parse(res.stdout) as InstanceView;
    };
    const charges = [await started(CHARGE, 1), await started(CHARGE, 2)];
    const totals = [await started(TOTALS, 1), await started(TOTALS, 2)];
    charges.push(await started(CHARGE, 3));
    t.equal(calls, 6, 'each charge tried twice');

    // Each execution says what failed where, and how many attempts that took.
    const charged = (await api<InstanceView>(`/process/instance/${charges[0]!.processInstanceId}`)).body;
    t.match(charged.data.error, { code: 'HTTP_500', nodeId: 'charge', attempts: 2, message: /answered 500/ });
    t.equal(charged.nodes.find((n) => n.nodeId === 'charge')?.attempts, 2, 'the node instance: two tries');
    const scripted = (await api<InstanceView>(`/process/instance/${totals[0]!.processInstanceId}`)).body;
    t.match(scripted.data.error, {
      code: 'SCRIPT_ERROR',
      nodeId: 'total',
      attempts: 1,
      message: /no lines in order 1/,
    });

    // Grouped: the largest first, each with its newest execution; the same whether live or archived.
    const grouped = await api<FailureGroups>('/process/failures?sort=count');
    t.equal(grouped.status, 200);
    const newest = (list: InstanceView[]) => list.at(-1)!;
    t.match(grouped.body, {
      total: 5,
      groupCount: 2,
      groups: [
        {
          processId: CHARGE,
          processName: 'Charge',
          errorCode: 'HTTP_500',
          nodeId: 'charge',
          nodeName: 'Charge the card',
          count: 3,
          newest: {
            processInstanceId: newest(charges).processInstanceId,
            processVersion: '1',
            message: /answered 500/,
          },
        },
        {
          processId: TOTALS,
          errorCode: 'SCRIPT_ERROR',
          nodeId: 'total',
          count: 2,
          newest: { processInstanceId: newest(totals).processInstanceId, message: /no lines in order 2/ },
        },
      ],
    });
    const endOfNewest = (await api<InstanceView>(`/process/instance/${newest(charges).processInstanceId}`)).body
      .endTime;
    t.equal(grouped.body.groups[0]!.newest.at, endOfNewest, 'when the newest failed');
    const byNewest = await api<FailureGroups>('/process/failures');
    t.same(
      byNewest.body.groups.map((g) => g.nodeId),
      ['charge', 'total'],
      'newest first: the charge that failed last',
    );
    t.same(
      (await api<FailureGroups>(`/process/failures?processId=${TOTALS}`)).body.groups.map((g) => g.count),
      [2],
    );

    // The list by the node they failed at: what `wfx instances list --failed-node` and a bulk query select.
    const listed = async (query: string) =>
      (await api<{ items: Array<{ processInstanceId: string }> }>(`/process/instances?${query}`)).body.items.map(
        (i) => i.processInstanceId,
      );
    const ids = (list: InstanceView[]) => list.map((i) => i.processInstanceId).reverse();
    t.same(await listed('state=FAILED&errorCode=HTTP_500&failedNode=charge'), ids(charges));
    t.same(await listed('failedNode=total'), ids(totals));
    t.same(await listed('failedNode=charge&errorCode=SCRIPT_ERROR'), []);

    // The CLI: the table, the same answer as JSON, the list by node.
    const table = await run(['instances', 'failures', '--sort', 'count']);
    t.equal(table.code, 0, table.stderr);
    const lines = table.stdout.split('\n');
    t.match(lines[0], /^COUNT\s+CODE\s+NODE\s+FLOW\s+NEWEST\s+MESSAGE$/);
    t.match(
      lines[1],
      new RegExp(
        `^3\\s+HTTP_500\\s+charge \\(Charge the card\\)\\s+Charge v1\\s+${newest(charges).processInstanceId} \\S+ ago\\s+POST ${base}/charge answered 500`,
      ),
    );
    t.match(lines[2], /^2\s+SCRIPT_ERROR\s+total\s+Totals v1\s+\S+ \S+ ago\s+.*no lines in order 2/);
    t.match(table.stdout, /^5 failed executions in 2 groups$/m);
    t.match(
      table.stdout,
      new RegExp(
        `^list the first group: wfx instances list --state failed --error-code HTTP_500 --failed-node charge ${CHARGE}$`,
        'm',
      ),
    );
    const json = await run(['instances', 'failures', '--sort', 'count', '--json']);
    t.same(JSON.parse(json.stdout), grouped.body, '--json is the answer');
    const hinted = await run([
      'instances',
      'list',
      '--state',
      'failed',
      '--error-code',
      'HTTP_500',
      '--failed-node',
      'charge',
      CHARGE,
      '--json',
    ]);
    t.equal(hinted.code, 0, hinted.stderr);
    t.same(
      (JSON.parse(hinted.stdout) as Array<{ processInstanceId: string }>).map((i) => i.processInstanceId),
      ids(charges),
      'the hint lists the group',
    );
    const since = await run(['instances', 'failures', '--since', '2000-01-01T00:00:00Z', '--flow', TOTALS, '--json']);
    t.equal((JSON.parse(since.stdout) as FailureGroups).total, 2);
    const bad = await run(['instances', 'failures', '--since', 'yesterday']);
    t.equal(bad.code, 2, 'a --since that is neither: a usage error');
  },
);
