import t from 'tap';
import type { CliContext } from '../../src/cli/context.js';
import { tracingArgs, tracingOptions } from '../../src/cli/tracing-options.js';
import { WfxError } from '../../src/shared/errors.js';

const ctx = (env: NodeJS.ProcessEnv) => ({ env }) as unknown as CliContext;

/** The code of the WfxError `f` throws; null when it throws none. */
const code = (f: () => unknown) => {
  try {
    f();
    return null;
  } catch (err) {
    return err instanceof WfxError ? err.code : 'not a WfxError';
  }
};

t.test('tracing is off without --otlp-endpoint or an OTEL endpoint variable', async (t) => {
  t.same(tracingOptions(ctx({}), {}), {});
  t.same(
    tracingOptions(ctx({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }), {}),
    {},
    'OTEL_SDK_DISABLED turns the variables off',
  );
});

t.test('the flag and the OTEL_* variables, as the OpenTelemetry specification reads them', async (t) => {
  t.match(tracingOptions(ctx({}), { otlpEndpoint: 'http://c:4318/' }), {
    tracing: { url: 'http://c:4318/v1/traces', serviceName: 'wfx', maxQueue: 2048, maxBatch: 512, delayMs: 5000 },
  });
  t.match(tracingOptions(ctx({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c/otlp' }), {}), {
    tracing: { url: 'https://c/otlp/v1/traces' },
  });
  t.match(
    tracingOptions(
      ctx({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://ignored',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://c/custom/path',
        OTEL_SERVICE_NAME: 'orders',
        OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%20b,x-one=1',
        OTEL_BSP_SCHEDULE_DELAY: '250',
      }),
      { otlpHeader: ['X-One=2'] },
    ),
    {
      tracing: {
        url: 'https://c/custom/path',
        serviceName: 'orders',
        headers: { 'api-key': 'a b', 'x-one': '2' },
        delayMs: 250,
      },
    },
    'the traces endpoint as it is; the flag header wins over the variable',
  );
  t.same(tracingArgs({ otlpEndpoint: 'http://c', otlpHeader: ['a=b'], serviceName: 's' }), [
    '--otlp-endpoint',
    'http://c',
    '--otlp-header',
    'a=b',
    '--service-name',
    's',
  ]);
});

t.test('a bad endpoint, header or number is a USAGE_ERROR', async (t) => {
  t.equal(
    code(() => tracingOptions(ctx({}), { otlpEndpoint: 'ftp://c' })),
    'USAGE_ERROR',
  );
  t.equal(
    code(() => tracingOptions(ctx({}), { otlpEndpoint: 'http://c', otlpHeader: ['novalue'] })),
    'USAGE_ERROR',
  );
  t.equal(
    code(() => tracingOptions(ctx({ OTEL_BSP_MAX_QUEUE_SIZE: '-1' }), { otlpEndpoint: 'http://c' })),
    'USAGE_ERROR',
  );
});

t.test('the sample ratio: the flag, else OTEL_TRACES_SAMPLER and its argument, else 1', async (t) => {
  const ratio = (env: NodeJS.ProcessEnv, flag?: string) =>
    tracingOptions(ctx(env), { otlpEndpoint: 'http://c', ...(flag !== undefined && { traceSampleRatio: flag }) })
      .tracing?.sampleRatio;
  t.equal(ratio({}), 1, 'every trace by default');
  t.equal(ratio({}, '0.1'), 0.1);
  t.equal(ratio({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }), 0.25);
  t.equal(
    ratio({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' }, '0.01'),
    0.01,
    'the flag wins',
  );
  t.equal(ratio({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' }), 0);
  t.equal(ratio({ OTEL_TRACES_SAMPLER: 'always_on' }), 1);
  for (const bad of ['1.5', '-0.1', 'half', ''])
    t.equal(
      code(() => ratio({}, bad)),
      'USAGE_ERROR',
      `--trace-sample-ratio ${JSON.stringify(bad)}`,
    );
  t.equal(
    code(() => ratio({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })),
    'USAGE_ERROR',
    'an unknown sampler',
  );
  t.same(tracingArgs({ otlpEndpoint: 'http://c', traceSampleRatio: '0.1' }), [
    '--otlp-endpoint',
    'http://c',
    '--trace-sample-ratio',
    '0.1',
  ]);
});
