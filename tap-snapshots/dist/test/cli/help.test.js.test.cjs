/* IMPORTANT
 * This snapshot file is auto-generated, but designed for humans.
 * It should be checked into source control and tracked carefully.
 * Re-generate by setting TAP_SNAPSHOT=1 and running tests.
 * Make sure to inspect the output below.  Do not ignore changes!
 */
'use strict'
exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx  --help 1`] = `
Usage: wfx [options] [command]

wfx: run durable workflows locally. Talks to a wfx daemon over its HTTP API.

Options:
  --url <url>                  daemon URL (default: WFX_URL, the local daemon,
                               WFX_DEFAULT_URL, http://127.0.0.1:7878)
  --api-key <key>              API key (default: WFX_API_KEY, \`wfx login\`, the
                               local bootstrap.key)
  --data-dir <dir>             data directory (default: WFX_DATA_DIR, the
                               nearest .wfx/)
  --json                       machine output on stdout, nothing else
  --no-color                   no colour (also NO_COLOR)
  -h, --help                   display help for command

Commands:
  daemon                       start, stop and inspect the local wfx daemon
  init                         start a wfx project here: flows/ with a first
                               flow and its tests, the flow format's schema for
                               editors, .wfx/ in .gitignore
  dev [options]                run the daemon here and republish flows/ to
                               DEVELOPMENT whenever a file changes
  flow                         check and publish flow files
  run [options] <flow>         start an execution of a published flow, or of a
                               flow file (published to DEVELOPMENT first)
  instances                    list, inspect, cancel, retry and replay
                               executions
  logs [options] <id>          the log of an execution; --follow keeps printing
                               until it finishes
  task                         list and answer executions waiting at an input
                               node or user task
  event                        deliver messages and signals to waiting catch
                               events
  keys                         manage API keys (needs ADMIN)
  env                          the {env.NAME} values flows read, per environment
                               (needs ADMIN)
  secrets                      the values flows name as {secret.NAME}, per
                               environment, sealed and never shown (needs ADMIN)
  apply [options] <dir>        make the daemon hold what a project directory
                               declares, as one change (needs ADMIN)
  export [options] <dir>       write what \`wfx apply\` reads, from the daemon:
                               the flows an environment runs and wfx.yaml (no
                               secret values)
  webhooks                     webhook registrations: endpoints for GitHub,
                               Stripe, Slack, Standard Webhooks and custom
                               senders (needs ADMIN)
  email-connections            IMAP mailboxes for email triggers (needs ADMIN)
  ai                           AI in flows: model providers (needs ADMIN)
  memory                       durable memory of memoryAction and aiTask chat
                               memory, per organization (needs ADMIN)
  files                        the file store: uploads for file inputs and
                               voiceTask, a voiceTask's audio
  audit [options]              who changed what through the API: the audit
                               trail, newest first (needs ADMIN)
  domains                      domains of workers: each action's input and
                               output schemas (register: WORKFLOW_PUBLISH)
  jobs                         jobs of domainTasks waiting for workers (needs
                               WORKFLOW_READ)
  worker                       run a job worker for a domain (needs the worker
                               role)
  mcp [options]                print the configuration an MCP client (an AI
                               assistant, an IDE) needs to call flows as tools
  expr [options] <expression>  evaluate a \${...} condition or a {ref} template
                               locally, as the engine does; prints JSON
  test [options] [paths...]    run flows' test files (*.test.yaml) in-process:
                               mocks, a clock of their own, no daemon
  cron                         check schedule expressions
  schedules                    a daemon's schedule triggers: list them, pause
                               and resume a flow's, backfill missed fire times
  login [options]              check an API key against the daemon and keep it
                               for its URL (OS keyring, else a 0600 file)
  console [options]            open the browser console, signed in (a one-time
                               link: good once, for two minutes)
  tui                          the operator console: executions live, waiting
                               tasks answered with a form, flows and their runs,
                               trigger health (keys: ? for help, q to quit)
  completion <shell>           a shell completion script for wfx: commands,
                               subcommands and options
  help [command]               display help for command

  -V, --version      print the version of wfx (as the first argument)

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx ai providers create --help 1`] = `
Usage: wfx ai providers create [options] <name>

register a provider (the API key comes on stdin with --api-key-stdin; never
shown again)

Options:
  --kind <kind>            how the model is reached (choices:
                           "openai-compatible", "local")
  --base-url <url>         openai-compatible: the API base URL (e.g.
                           http://127.0.0.1:11434/v1)
  --model <model>          the model asked for (local: a label, default the
                           file's name)
  --api-key-stdin          openai-compatible: read the API key from standard
                           input
  --model-path <file>      local: the GGUF model file
  --threads <n>            local: CPU threads for inference
  --context-size <tokens>  local: the context size in tokens
  --org <organization>     system keys: the organization (default: default)
  --default                make it the organization's default provider
  -h, --help               display help for command

Examples:
  $ printf %s "$OPENAI_API_KEY" | wfx ai providers create openai --kind openai-compatible --base-url https://api.openai.com/v1 --model gpt-4o-mini --api-key-stdin --default
  $ wfx ai providers create ollama --kind openai-compatible --base-url http://127.0.0.1:11434/v1 --model llama3.2
  $ wfx ai providers create tiny --kind local --model-path models/qwen2.5-0.5b-instruct-q4_k_m.gguf --threads 2

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx ai providers delete --help 1`] = `
Usage: wfx ai providers delete [options] <name>

remove a provider (aiTasks naming it then fail with AI_PROVIDER_NOT_FOUND)

Options:
  --org <organization>  system keys: the organization (default: default)
  -h, --help            display help for command

Example:
  $ wfx ai providers delete ollama

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx ai providers get --help 1`] = `
Usage: wfx ai providers get [options] <name>

one provider (never its key)

Options:
  --org <organization>  system keys: the organization (default: default)
  -h, --help            display help for command

Example:
  $ wfx ai providers get openai

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx ai providers list --help 1`] = `
Usage: wfx ai providers list [options]

the providers (never their keys)

Options:
  --org <organization>  system keys: the organization (default: default)
  -h, --help            display help for command

Example:
  $ wfx ai providers list --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx ai providers test --help 1`] = `
Usage: wfx ai providers test [options] <name>

send a tiny prompt through a provider: model, latency, token counts and the
answer

Options:
  --org <organization>  system keys: the organization (default: default)
  -h, --help            display help for command

Example:
  $ wfx ai providers test openai

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx ai providers update --help 1`] = `
Usage: wfx ai providers update [options] <name>

change a provider (its kind never changes)

Options:
  --base-url <url>         openai-compatible: the API base URL (e.g.
                           http://127.0.0.1:11434/v1)
  --model <model>          the model asked for (local: a label, default the
                           file's name)
  --api-key-stdin          openai-compatible: read the API key from standard
                           input
  --model-path <file>      local: the GGUF model file
  --threads <n>            local: CPU threads for inference
  --context-size <tokens>  local: the context size in tokens
  --org <organization>     system keys: the organization (default: default)
  --remove-api-key         remove the API key
  --default                make it the organization's default provider
  --no-default             no longer the default
  -h, --help               display help for command

Examples:
  $ wfx ai providers update openai --model gpt-4.1-mini
  $ printf %s "$NEW_KEY" | wfx ai providers update openai --api-key-stdin

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx apply --help 1`] = `
Usage: wfx apply [options] <dir>

make the daemon hold what a project directory declares, as one change (needs
ADMIN)

Arguments:
  dir                   the project directory: wfx.yaml, and its flow files
                        (under flows/ when it has one)

Options:
  --env <environment>   the environment its flows, variables and schedules are
                        applied to (choices: "DEVELOPMENT", "PRODUCTION",
                        default: "PRODUCTION")
  --org <organization>  the organization (system keys)
  --dry-run             print the plan only: nothing changes
  --prune               remove what the project no longer declares (flows are
                        deactivated in the environment)
  --from-env            set each secret the project names from this program's
                        environment variable of that name, when it has one, in
                        the same change
  -h, --help            display help for command

Plan lines: + created, ~ changed, - removed, = unchanged. A problem anywhere refuses the whole apply.
Examples:
  $ wfx apply . --dry-run
  $ WAREHOUSE_TOKEN=$CI_TOKEN wfx apply . --env PRODUCTION --prune --from-env --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx audit --help 1`] = `
Usage: wfx audit [options]

who changed what through the API: the audit trail, newest first (needs ADMIN)

Options:
  --limit <n>           at most this many (default: 100)
  --actor <actor>       key:<keyId>, oidc:<subject>, or a bare key id or subject
  --action <text>       actions containing this text (e.g. "POST
                        /admin/api-keys", cancel, DELETE)
  --target <id>         records naming this id (an execution, a key, a webhook,
                        a flow...)
  --since <time>        records at or after this ISO time
  --until <time>        records at or before this ISO time
  --org <organization>  system keys: one organization (default: all)
  --follow              then print new records as they come (oldest first),
                        until Ctrl-C
  -h, --help            display help for command

Examples:
  $ wfx audit --actor key:3f2a9c1d --since 2026-11-01T00:00:00Z
  $ wfx audit --follow

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx completion --help 1`] = `
Usage: wfx completion [options] <shell>

a shell completion script for wfx: commands, subcommands and options

Arguments:
  shell       the shell (choices: "bash", "zsh", "fish")

Options:
  -h, --help  display help for command

Examples:
  $ echo 'eval "$(wfx completion bash)"' >> ~/.bashrc
  $ wfx completion fish > ~/.config/fish/completions/wfx.fish

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx console --help 1`] = `
Usage: wfx console [options]

open the browser console, signed in (a one-time link: good once, for two
minutes)

Options:
  --no-open   print the link instead of opening a browser
  -h, --help  display help for command

The browser is $BROWSER, else the system's default (xdg-open, open, start). When none opens
(no display, as over SSH or in a container; an opener that fails), the link is printed.
Examples:
  $ wfx console
  $ wfx console --no-open

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx cron next --help 1`] = `
Usage: wfx cron next [options] <cron>

the next fire times of a five-field cron expression, one ISO time a line (no
daemon needed)

Arguments:
  cron          minute hour day-of-month month day-of-week

Options:
  --from <iso>  from this instant (default now)
  --tz <zone>   IANA time zone the expression is read in (default: "UTC")
  --count <n>   how many (default: 5)
  -h, --help    display help for command

Examples:
  $ wfx cron next '*/15 9-17 * * 1-5' --tz Europe/Berlin
  $ wfx cron next '30 2 * * *' --tz Europe/Berlin --from 2027-03-27T00:00:00Z --count 3   # skips the DST gap

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx daemon backup --help 1`] = `
Usage: wfx daemon backup [options] <dir>

copy the running daemon's data directory, consistently, while it serves (needs a
system admin key)

Arguments:
  dir         where the copy goes: a directory that does not exist yet, or an
              empty one, on the daemon's host

Options:
  -h, --help  display help for command

Examples:
  $ wfx daemon backup /backups/wfx-2026-01-31
  $ wfx daemon backup ./wfx-copy --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx daemon check --help 1`] = `
Usage: wfx daemon check [options]

check a stopped data directory without changing it: every damaged or missing
file, with offsets (exit 1 when any)

Options:
  --accept-loss  when the only damage is in the last journal segment, cut it
                 there (saying what is lost), then check again
  --adopt        when the only finding is a missing store.manifest, write one
                 for what the directory holds (only for a directory known to be
                 whole), then check again
  -h, --help     display help for command

Examples:
  $ wfx daemon check
  $ wfx daemon check --data-dir /srv/wfx --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx daemon rotate-secrets-key --help 1`] = `
Usage: wfx daemon rotate-secrets-key [options]

seal every stored secret again with a new key, added to the key file (or
--key-id: one added there already)

Options:
  --key-id <id>  a key already in the key file (on a database: in every
                 daemon's), by its id
  -h, --help     display help for command

Examples:
  $ wfx daemon rotate-secrets-key
  $ wfx daemon rotate-secrets-key --key-id 3f9a0c1d22e4b5a6

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx daemon secrets --help 1`] = `
Usage: wfx daemon secrets [options]

the keys that encrypt stored secrets: where they are kept, and how many secrets
each seals

Options:
  -h, --help  display help for command

Example:
  $ wfx daemon secrets --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx daemon start --help 1`] = `
Usage: wfx daemon start [options]

start the daemon (in the background unless --foreground)

Options:
  --port <port>                       port to listen on (0 picks a free one)
                                      (default: 7878)
  --host <host>                       address to listen on (default:
                                      "127.0.0.1")
  --foreground                        run in this terminal, logging readable
                                      lines, until Ctrl-C
  --retention <days>                  keep finished executions this many days
  --flows <dir>                       validate and publish the flow files of
                                      this directory at start (organization
                                      default, PRODUCTION)
  --max-json-depth <n>                how deep untrusted JSON (request bodies,
                                      payloads, work results) may nest (default
                                      64)
  --max-file-size <MiB>               the largest file the file store takes, in
                                      megabytes (default 25)
  --webhook-replay-window <duration>  how long a webhook delivery id makes a
                                      replay a duplicate (default 72h)
  --http-deny <cidrs>                 CIDRs serviceTask may never connect to,
                                      comma-separated (default $WFX_HTTP_DENY)
  --http-allow <cidrs>                CIDRs serviceTask may connect to though
                                      refused by default: own port, link-local
                                      (default $WFX_HTTP_ALLOW)
  --limit <name=value>                change one of what an execution, tree or
                                      organization may hold, NAME=VALUE,
                                      repeatable: variables-size, log-size,
                                      branches, children, tree-executions,
                                      tree-created, loop-iterations,
                                      live-executions, org-starts-per-second,
                                      bulk-operations, bulk-operations-total,
                                      bulk-executions (docs/operations.md,
                                      Limits)
  --bulk-rate <n>                     executions per second the bulk operations
                                      (wfx instances cancel --query ...) apply,
                                      all together (default 500;
                                      docs/operations.md)
  --execution-cache <n>               live executions kept in memory at most;
                                      the others wait on disk and are read back
                                      when touched (default 10000;
                                      docs/operations.md)
  --store <url>                       keep state in PostgreSQL instead of the
                                      data directory:
                                      postgres://user@host:5432/db (default
                                      $WFX_STORE)
  --standby                           with --store: wait while another daemon
                                      serves the database, and take over when it
                                      stops
  --share                             with --store: share the database's
                                      executions with its other daemons started
                                      with --share, each serving a part of them
  --lease <duration>                  with --store: how long this daemon's lease
                                      on the database lasts unrenewed: how soon
                                      a standby takes over after it dies
                                      (default 10s)
  --partitions <n>                    with --store: how many partitions a
                                      database not used before is cut into,
                                      fixed from then on; at most one fewer
                                      daemons serve executions (default 16)
  --advertise-url <url>               with --store: the URL the database's other
                                      daemons reach this one at, to forward
                                      requests while it serves (default: the
                                      address it listens on; with --host
                                      0.0.0.0, this host's name)
  --secrets-key-file <file>           the file of the keys that encrypt stored
                                      secrets (default $WFX_SECRETS_KEY_FILE,
                                      else <data-dir>/secrets.key, made on first
                                      start); $WFX_SECRETS_KEY gives the keys
                                      themselves
  --secrets-keyring                   keep the keys that encrypt stored secrets
                                      in the OS keyring instead of a file
  --secrets-dir <dir>                 a directory of mounted secret files
                                      (Kubernetes, Docker): NAME or
                                      ENVIRONMENT/NAME backs {secret.NAME} of
                                      organization default, read at each use
                                      (default $WFX_SECRETS_DIR)
  --forget-secrets-without-key        the keys lost: start anyway, forgetting
                                      the stored secrets sealed with keys this
                                      daemon lacks (set them again)
  --max-connections <n>               connections served at once; a few more are
                                      answered TOO_MANY_CONNECTIONS, the rest
                                      reset (default: from the open-files limit)
  --headers-timeout <duration>        how long a connection has to send its
                                      request headers before it is closed
                                      (default 5s)
  --metrics-open                      serve GET /metrics without a credential
                                      (only with --host on a loopback address,
                                      as by default)
  --metrics-token-file <file>         a file holding a token that reads GET
                                      /metrics, sent as 'Authorization: Bearer
                                      <token>' (a Prometheus scraper's
                                      credentials_file)
  --audit-retention <duration>        how long audit records (GET /admin/audit)
                                      are kept, swept a whole day at a time
                                      (default 90d)
  --oidc-issuer <url>                 also accept bearer JWTs from this OIDC
                                      issuer (needs --oidc-audience)
  --oidc-audience <aud>               the audience bearer tokens must carry
  --oidc-org-claim <claim>            the token claim naming the organization
                                      (default: "org_id")
  --oidc-client-id <id>               the console's OIDC client at the issuer:
                                      sign-in through /auth/callback
  --oidc-client-secret-file <file>    a confidential client's secret, read from
                                      this file (or $WFX_OIDC_CLIENT_SECRET);
                                      none: a public client
  --oidc-scopes <scopes>              the scopes the console asks for (default
                                      "openid profile email offline_access")
  --public-url <url>                  where browsers and webhook senders reach
                                      the daemon, behind a proxy or tunnel
                                      (console links, OIDC redirects, webhook
                                      URLs)
  --otlp-endpoint <url>               export OpenTelemetry traces over OTLP/HTTP
                                      to this collector (<url>/v1/traces;
                                      default $OTEL_EXPORTER_OTLP_ENDPOINT;
                                      none: tracing off)
  --otlp-header <name=value>          a header sent with each export, repeatable
                                      (default $OTEL_EXPORTER_OTLP_HEADERS)
  --service-name <name>               the service.name of the exported spans
                                      (default $OTEL_SERVICE_NAME or wfx)
  --trace-sample-ratio <ratio>        the share of new traces sampled, 0 to 1; a
                                      caller's traceparent keeps its own
                                      decision (default $OTEL_TRACES_SAMPLER_ARG
                                      or 1)
  -h, --help                          display help for command

Examples:
  $ wfx daemon start
  $ wfx daemon start --port 0 --json
  $ wfx daemon start --foreground --flows flows

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx daemon status --help 1`] = `
Usage: wfx daemon status [options]

whether the daemon runs, where it listens, and its health (exit 5 when not
running)

Options:
  -h, --help  display help for command

Example:
  $ wfx daemon status --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx daemon stop --help 1`] = `
Usage: wfx daemon stop [options]

stop the daemon gracefully (finishes in-flight work, checkpoints)

Options:
  -h, --help  display help for command

Example:
  $ wfx daemon stop

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx dev --help 1`] = `
Usage: wfx dev [options]

run the daemon here and republish flows/ to DEVELOPMENT whenever a file changes

Options:
  --flows <dir>                       the flow files to watch (default: "flows")
  --test                              run the flows' test files (*.test.yaml) at
                                      start and after each change (wfx test)
  --port <port>                       port to listen on (0 picks a free one)
                                      (default: 7878)
  --host <host>                       address to listen on (default:
                                      "127.0.0.1")
  --max-json-depth <n>                how deep untrusted JSON may nest (default
                                      64)
  --max-file-size <MiB>               the largest file the file store takes, in
                                      megabytes (default 25)
  --webhook-replay-window <duration>  how long a webhook delivery id makes a
                                      replay a duplicate (default 72h)
  --http-deny <cidrs>                 CIDRs serviceTask may never connect to,
                                      comma-separated (default $WFX_HTTP_DENY)
  --http-allow <cidrs>                CIDRs serviceTask may connect to though
                                      refused by default: own port, link-local
                                      (default $WFX_HTTP_ALLOW)
  --limit <name=value>                change one of what an execution, tree or
                                      organization may hold, NAME=VALUE,
                                      repeatable: variables-size, log-size,
                                      branches, children, tree-executions,
                                      tree-created, loop-iterations,
                                      live-executions, org-starts-per-second,
                                      bulk-operations, bulk-operations-total,
                                      bulk-executions (docs/operations.md,
                                      Limits)
  --bulk-rate <n>                     executions per second the bulk operations
                                      (wfx instances cancel --query ...) apply,
                                      all together (default 500;
                                      docs/operations.md)
  --execution-cache <n>               live executions kept in memory at most;
                                      the others wait on disk and are read back
                                      when touched (default 10000;
                                      docs/operations.md)
  --store <url>                       keep state in PostgreSQL instead of the
                                      data directory:
                                      postgres://user@host:5432/db (default
                                      $WFX_STORE)
  --standby                           with --store: wait while another daemon
                                      serves the database, and take over when it
                                      stops
  --share                             with --store: share the database's
                                      executions with its other daemons started
                                      with --share, each serving a part of them
  --lease <duration>                  with --store: how long this daemon's lease
                                      on the database lasts unrenewed: how soon
                                      a standby takes over after it dies
                                      (default 10s)
  --partitions <n>                    with --store: how many partitions a
                                      database not used before is cut into,
                                      fixed from then on; at most one fewer
                                      daemons serve executions (default 16)
  --advertise-url <url>               with --store: the URL the database's other
                                      daemons reach this one at, to forward
                                      requests while it serves (default: the
                                      address it listens on; with --host
                                      0.0.0.0, this host's name)
  --secrets-key-file <file>           the file of the keys that encrypt stored
                                      secrets (default $WFX_SECRETS_KEY_FILE,
                                      else <data-dir>/secrets.key, made on first
                                      start); $WFX_SECRETS_KEY gives the keys
                                      themselves
  --secrets-keyring                   keep the keys that encrypt stored secrets
                                      in the OS keyring instead of a file
  --secrets-dir <dir>                 a directory of mounted secret files
                                      (Kubernetes, Docker): NAME or
                                      ENVIRONMENT/NAME backs {secret.NAME} of
                                      organization default, read at each use
                                      (default $WFX_SECRETS_DIR)
  --forget-secrets-without-key        the keys lost: start anyway, forgetting
                                      the stored secrets sealed with keys this
                                      daemon lacks (set them again)
  --max-connections <n>               connections served at once; a few more are
                                      answered TOO_MANY_CONNECTIONS, the rest
                                      reset (default: from the open-files limit)
  --headers-timeout <duration>        how long a connection has to send its
                                      request headers before it is closed
                                      (default 5s)
  --metrics-open                      serve GET /metrics without a credential
                                      (only with --host on a loopback address,
                                      as by default)
  --metrics-token-file <file>         a file holding a token that reads GET
                                      /metrics, sent as 'Authorization: Bearer
                                      <token>' (a Prometheus scraper's
                                      credentials_file)
  --audit-retention <duration>        how long audit records (GET /admin/audit)
                                      are kept, swept a whole day at a time
                                      (default 90d)
  --oidc-issuer <url>                 also accept bearer JWTs from this OIDC
                                      issuer (needs --oidc-audience)
  --oidc-audience <aud>               the audience bearer tokens must carry
  --oidc-org-claim <claim>            the token claim naming the organization
                                      (default: "org_id")
  --oidc-client-id <id>               the console's OIDC client at the issuer:
                                      sign-in through /auth/callback
  --oidc-client-secret-file <file>    a confidential client's secret, read from
                                      this file (or $WFX_OIDC_CLIENT_SECRET);
                                      none: a public client
  --oidc-scopes <scopes>              the scopes the console asks for (default
                                      "openid profile email offline_access")
  --public-url <url>                  where browsers and webhook senders reach
                                      the daemon, behind a proxy or tunnel
                                      (console links, OIDC redirects, webhook
                                      URLs)
  --otlp-endpoint <url>               export OpenTelemetry traces over OTLP/HTTP
                                      to this collector (<url>/v1/traces;
                                      default $OTEL_EXPORTER_OTLP_ENDPOINT;
                                      none: tracing off)
  --otlp-header <name=value>          a header sent with each export, repeatable
                                      (default $OTEL_EXPORTER_OTLP_HEADERS)
  --service-name <name>               the service.name of the exported spans
                                      (default $OTEL_SERVICE_NAME or wfx)
  --trace-sample-ratio <ratio>        the share of new traces sampled, 0 to 1; a
                                      caller's traceparent keeps its own
                                      decision (default $OTEL_TRACES_SAMPLER_ARG
                                      or 1)
  -h, --help                          display help for command

Examples:
  $ wfx dev
  $ wfx dev --flows ./workflows --port 0

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx domains delete --help 1`] = `
Usage: wfx domains delete [options] <name>

delete a domain (refused while jobs of it wait)

Options:
  --org <organization>  system keys: the organization (default: default)
  -h, --help            display help for command

Example:
  $ wfx domains delete billing

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx domains list --help 1`] = `
Usage: wfx domains list [options]

the domains and their actions

Options:
  --org <organization>  system keys: the organization (default: default)
  -h, --help            display help for command

Example:
  $ wfx domains list --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx domains register --help 1`] = `
Usage: wfx domains register [options] <name>

register a domain, or replace it whole (refused while an action it drops has
jobs waiting)

Arguments:
  name                  the domain name (domainTask \`domain:\`)

Options:
  --file <file>         the domain: YAML or JSON with actions and their input
                        and output JSON Schemas
  --org <organization>  system keys: the organization (default: default)
  -h, --help            display help for command

Example:
  $ wfx domains register billing --file billing.domain.yaml

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx domains show --help 1`] = `
Usage: wfx domains show [options] <name>

a domain: its actions' input and output schemas

Options:
  --org <organization>  system keys: the organization (default: default)
  -h, --help            display help for command

Example:
  $ wfx domains show billing

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx email-connections create --help 1`] = `
Usage: wfx email-connections create [options]

add an IMAP connection (the password is read from stdin with --password-stdin;
never shown again)

Options:
  --name <name>
  --host <host>
  --port <port>        default 993 with TLS, else 143
  --user <user>
  --password-stdin     read the password from standard input
  --tls                TLS from the start (default)
  --starttls           upgrade with STARTTLS
  --no-tls             no encryption (local test servers only)
  --mailbox <mailbox>  the mailbox to watch (default: "INBOX")
  -h, --help           display help for command

Example:
  $ printf %s "$IMAP_PASSWORD" | wfx email-connections create --name support --host imap.example.com --user support@example.com --password-stdin

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx email-connections delete --help 1`] = `
Usage: wfx email-connections delete [options] <name>

remove an IMAP connection

Options:
  -h, --help  display help for command

Example:
  $ wfx email-connections delete support

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx email-connections list --help 1`] = `
Usage: wfx email-connections list [options]

IMAP connections (no passwords)

Options:
  -h, --help  display help for command

Example:
  $ wfx email-connections list --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx env list --help 1`] = `
Usage: wfx env list [options]

the values of both environments, or of one; --json: one's as {NAME: value}, both
by environment

Options:
  --env <environment>  only this environment (default: both) (choices:
                       "DEVELOPMENT", "PRODUCTION")
  -h, --help           display help for command

Examples:
  $ wfx env list
  $ wfx env list --env PRODUCTION --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx env set --help 1`] = `
Usage: wfx env set [options] <name> <value>

set a value

Options:
  --env <environment>  the environment (default: DEVELOPMENT under wfx dev, else
                       PRODUCTION) (choices: "DEVELOPMENT", "PRODUCTION")
  -h, --help           display help for command

Example:
  $ wfx env set API_URL https://api.example.com --env DEVELOPMENT

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx env unset --help 1`] = `
Usage: wfx env unset [options] <name>

remove a value

Options:
  --env <environment>  the environment (default: DEVELOPMENT under wfx dev, else
                       PRODUCTION) (choices: "DEVELOPMENT", "PRODUCTION")
  -h, --help           display help for command

Example:
  $ wfx env unset API_URL --env DEVELOPMENT

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx event send --help 1`] = `
Usage: wfx event send [options] <eventType>

deliver a message or signal (resumes matching catch events; with --ttl kept
until one waits)

Arguments:
  eventType                the messageRef the catch events wait for

Options:
  --correlation-key <key>  matches message subscriptions with this key (signals
                           match any)
  --data <json>            event data: a JSON object, or @file (each key becomes
                           a variable) (default: "{}")
  --set <key=value>        one data field; repeatable (default: [])
  --ttl <seconds>          keep it this long if nothing waits yet
  --message-id <id>        a repeat with the same id is a no-op while the first
                           is kept
  -h, --help               display help for command

Example:
  $ wfx event send payment-received --correlation-key order-42 --data '{"paid":99}' --ttl 3600

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx export --help 1`] = `
Usage: wfx export [options] <dir>

write what \`wfx apply\` reads, from the daemon: the flows an environment runs and
wfx.yaml (no secret values)

Arguments:
  dir                   where to write wfx.yaml and flows/

Options:
  --env <environment>   the environment whose flows and schedules are written
                        (choices: "DEVELOPMENT", "PRODUCTION", default:
                        "PRODUCTION")
  --org <organization>  the organization (system keys)
  --force               write over files export makes that exist already
  -h, --help            display help for command

Example:
  $ wfx export ./deploy && wfx apply ./deploy --dry-run   # only = lines

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx expr --help 1`] = `
Usage: wfx expr [options] <expression>

evaluate a \${...} condition or a {ref} template locally, as the engine does;
prints JSON

Arguments:
  expression     a JUEL expression written \${...}, or text with {ref} references

Options:
  --vars <json>  variables as a JSON object, or @file (default: "{}")
  --env <json>   values for {env.NAME}, as a JSON object, or @file (default:
                 "{}")
  -h, --help     display help for command

Examples:
  $ wfx expr '\${order.total < 1000 && approved}' --vars '{"order":{"total":250},"approved":true}'
  true
  $ wfx expr 'Approve order {order.id}?' --vars '{"order":{"id":42}}'
  "Approve order 42?"

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx flow activate --help 1`] = `
Usage: wfx flow activate [options] <flow> <version>

make a version the one an environment runs (rollback)

Arguments:
  flow                 its processId or its name
  version

Options:
  --env <environment>  the environment (choices: "DEVELOPMENT", "PRODUCTION",
                       default: "PRODUCTION")
  -h, --help           display help for command

Example:
  $ wfx flow activate 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 1 --env PRODUCTION

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx flow list --help 1`] = `
Usage: wfx flow list [options]

published flows with their versions, active versions and triggers

Options:
  --trigger <type>  only flows whose running version has a trigger of this type
                    (choices: "on-demand", "webhook", "schedule", "email",
                    "execution")
  -h, --help        display help for command

The name and TRIGGERS are those of the version that runs: PRODUCTION's active version, else
DEVELOPMENT's, else the newest. \`on-demand\` marks a flow meant to be started by hand or API.

Examples:
  $ wfx flow list
  $ wfx flow list --trigger on-demand

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx flow new --help 1`] = `
Usage: wfx flow new [options] <name>

a new flow file from a template, with a fresh processId

Arguments:
  name         the flow's name

Options:
  --dir <dir>  where to write it (default: "flows")
  -h, --help   display help for command

Example:
  $ wfx flow new "Order approval"   # flows/order-approval.yaml

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx flow promote --help 1`] = `
Usage: wfx flow promote [options] <flow>

make the version one environment runs the one another runs (the same version,
not a new one)

Arguments:
  flow                  its processId or its name

Options:
  --from <environment>  the environment whose active version is promoted
                        (choices: "DEVELOPMENT", "PRODUCTION")
  --to <environment>    the environment that runs it from now on (choices:
                        "DEVELOPMENT", "PRODUCTION")
  -h, --help            display help for command

Example:
  $ wfx flow promote order-approval --from DEVELOPMENT --to PRODUCTION

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx flow publish --help 1`] = `
Usage: wfx flow publish [options] <files...>

validate and publish flow files: a changed file is the next version, an
unchanged one keeps its version

Arguments:
  files                 flow files (YAML or JSON)

Options:
  --env <environment>   the environment that runs it (choices: "DEVELOPMENT",
                        "PRODUCTION", default: "PRODUCTION")
  --org <organization>  system keys: publish into this organization (default:
                        default)
  -h, --help            display help for command

Examples:
  $ wfx flow publish flows/*.yaml
  $ wfx flow publish order.yaml --env DEVELOPMENT --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx flow schema --help 1`] = `
Usage: wfx flow schema [options]

print the JSON Schema of flow files (point your editor at it)

Options:
  -h, --help  display help for command

Example:
  $ wfx flow schema > flow.schema.json
  then, first line of a flow file:  # yaml-language-server: $schema=./flow.schema.json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx flow show --help 1`] = `
Usage: wfx flow show|get [options] <flow>

a flow: its versions, its inputs, and one version's definition (default: the
latest)

Arguments:
  flow           its processId or its name

Options:
  --version <n>  this version
  -h, --help     display help for command

Example:
  $ wfx flow show 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --version 1

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx flow validate --help 1`] = `
Usage: wfx flow validate [options] <files...>

check flow files with the daemon's own validator; where a daemon answers, also
what a publish checks against its state; exit 2 if any has a problem

Arguments:
  files                flow files (YAML or JSON)

Options:
  --env <environment>  the environment a publish would activate it in (its agent
                       tools are checked there) (choices: "DEVELOPMENT",
                       "PRODUCTION", default: "PRODUCTION")
  --offline            only the checks that need no daemon (no webhooks,
                       connections, domains or tools)
  -h, --help           display help for command

Examples:
  $ wfx flow validate flows/*.yaml
  $ wfx flow validate order.yaml --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx init --help 1`] = `
Usage: wfx init [options]

start a wfx project here: flows/ with a first flow and its tests, the flow
format's schema for editors, .wfx/ in .gitignore

Options:
  -h, --help  display help for command

Files that exist are kept (nothing is overwritten); running it again adds what is missing.

Example:
  $ wfx init && wfx dev

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx instances bulk cancel --help 1`] = `
Usage: wfx instances bulk cancel [options] <bulkId>

cancel a running bulk operation: no chunk starts after this; what was done stays
done

Options:
  -h, --help  display help for command

Example:
  $ wfx instances bulk cancel 0193a5c2-5d1e-7c3a-9b1f-2a3b4c5d6e7f

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx instances bulk follow --help 1`] = `
Usage: wfx instances bulk follow [options] <bulkId>

follow a bulk operation until it ends (a progress bar on a terminal)

Options:
  -h, --help  display help for command

Example:
  $ wfx instances bulk follow 0193a5c2-5d1e-7c3a-9b1f-2a3b4c5d6e7f

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx instances bulk list --help 1`] = `
Usage: wfx instances bulk list [options]

bulk operations, newest first

Options:
  --state <state>  only those in this state (choices: "running", "completed",
                   "cancelled", "failed")
  -h, --help       display help for command

Example:
  $ wfx instances bulk list --state running

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx instances bulk show --help 1`] = `
Usage: wfx instances bulk show [options] <bulkId>

one bulk operation: its query, its progress, and its results so far

Options:
  --outcome <outcome>  only results of this outcome (choices: "done", "skipped")
  --limit <n>          at most this many results (default: 20)
  -h, --help           display help for command

Example:
  $ wfx instances bulk show 0193a5c2-5d1e-7c3a-9b1f-2a3b4c5d6e7f --outcome skipped

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx instances cancel --help 1`] = `
Usage: wfx instances cancel [options] [id]

cancel a running execution, its whole tree (--tree), or every one a query
selects (--query: a bulk operation)

Arguments:
  id                          the processInstanceId (or a unique prefix of it)

Options:
  --tree                      the execution and everything started under it,
                              even after it ended (a bulk operation)
  --query                     act on every execution the selection flags select
                              (a bulk operation), not on one id
  --flow <processId>          only executions of this flow
  --version <n>               only executions of this flow version
  --state <state>             only executions in this state (choices: "running",
                              "completed", "failed", "cancelled")
  --env <environment>         only executions in this environment (choices:
                              "DEVELOPMENT", "PRODUCTION")
  --error-code <code>         only failed executions with this failure code
  --failed-node <node>        only failed executions that failed at this node
  --correlation-key <key>     only executions with this correlation key
  --waiting <for>             only running executions waiting for this at some
                              node (person: an input node or user task; any:
                              anything) (choices: "person", "event", "timer",
                              "worker", "child", "queue", "any")
  --where <name=value>        only executions with this search attribute (a
                              flow's search:); repeat for more, all must hold
  --started-after <instant>   only executions started at or after this instant
                              (ISO)
  --started-before <instant>  only executions started before this instant (ISO)
  --org <organization>        system keys: only this organization's executions
                              (default: every one's)
  --all                       child executions too (loop iterations,
                              subprocesses, agents' tools); default: top-level
                              only
  --root <id>                 only the tree of this top-level execution: it and
                              everything started under it
  --dry-run                   with --query: count the selection and show a
                              sample, changing nothing
  --sample <n>                with --dry-run: how many to show (at most 100)
                              (default: 10)
  --yes                       with --query: do not ask for confirmation (needed
                              without a terminal)
  --detach                    with --query: start the operation and print its
                              id, without following it
  -h, --help                  display help for command

Examples:
  $ wfx instances cancel 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f
  $ wfx instances cancel 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f --tree
  $ wfx instances cancel --query --flow 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --state running --dry-run
  $ wfx instances cancel --query --flow 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --started-before 2026-11-20 --yes

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx instances failures --help 1`] = `
Usage: wfx instances failures [options]

failed executions grouped by flow, failure code and node: counts and the newest
of each

Options:
  --flow <processId>   only this flow
  --since <when>       only executions started since: a duration back (1h, 2d)
                       or an ISO 8601 instant
  --env <environment>  only executions in this environment (choices:
                       "DEVELOPMENT", "PRODUCTION")
  --sort <order>       newest (the latest failures first) or count (the largest
                       groups first) (choices: "newest", "count", default:
                       "newest")
  --limit <n>          at most this many groups (default: 50)
  --all                child executions too (loop iterations, subprocesses,
                       agents' tools); default: top-level only
  -h, --help           display help for command

Examples:
  $ wfx instances failures
  $ wfx instances failures --since 1h --sort count
  $ wfx instances failures --flow 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx instances get --help 1`] = `
Usage: wfx instances get [options] <id>

one execution: state, nodes, each agent's conversation, variables, output, error

Arguments:
  id          the processInstanceId (or a unique prefix of it)

Options:
  -h, --help  display help for command

Example:
  $ wfx instances get 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx instances list --help 1`] = `
Usage: wfx instances list [options] [flow]

executions, newest first (of one flow, or of every flow)

Arguments:
  flow                     only this flow (its processId or its name)

Options:
  --state <state>          only executions in this state (choices: "running",
                           "completed", "failed", "cancelled")
  --env <environment>      only executions in this environment (choices:
                           "DEVELOPMENT", "PRODUCTION")
  --error-code <code>      only failed executions with this failure code
  --failed-node <nodeId>   only failed executions that failed at this node
  --correlation-key <key>  only executions with this correlation key
  --waiting <for>          only running executions waiting for this at some node
                           (person: an input node or user task; any: anything)
                           (choices: "person", "event", "timer", "worker",
                           "child", "queue", "any")
  --where <name=value>     only executions with this search attribute (a flow's
                           search:); repeat for more, all must hold
  --limit <n>              at most this many (default: 50)
  --all                    child executions too (loop iterations, subprocesses,
                           agents' tools); default: top-level only
  --root <id>              only the tree of this top-level execution: it and
                           everything started under it, ended ones too
  -h, --help               display help for command

Examples:
  $ wfx instances list
  $ wfx instances list 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --state failed --json
  $ wfx instances list --error-code HTTP_503 --env PRODUCTION
  $ wfx instances list --waiting person
  $ wfx instances list --where orderId=A-1002

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx instances move --help 1`] = `
Usage: wfx instances move [options] [id]

move a running execution to another published version of its flow, or every one
a query selects

Arguments:
  id                          the processInstanceId (or a unique prefix of it)

Options:
  --to <version>              the version to move it to
  --query                     act on every execution the selection flags select
                              (a bulk operation), not on one id
  --flow <processId>          only executions of this flow
  --version <n>               only executions of this flow version
  --state <state>             only executions in this state (choices: "running",
                              "completed", "failed", "cancelled")
  --env <environment>         only executions in this environment (choices:
                              "DEVELOPMENT", "PRODUCTION")
  --error-code <code>         only failed executions with this failure code
  --failed-node <node>        only failed executions that failed at this node
  --correlation-key <key>     only executions with this correlation key
  --waiting <for>             only running executions waiting for this at some
                              node (person: an input node or user task; any:
                              anything) (choices: "person", "event", "timer",
                              "worker", "child", "queue", "any")
  --where <name=value>        only executions with this search attribute (a
                              flow's search:); repeat for more, all must hold
  --started-after <instant>   only executions started at or after this instant
                              (ISO)
  --started-before <instant>  only executions started before this instant (ISO)
  --org <organization>        system keys: only this organization's executions
                              (default: every one's)
  --all                       child executions too (loop iterations,
                              subprocesses, agents' tools); default: top-level
                              only
  --root <id>                 only the tree of this top-level execution: it and
                              everything started under it
  --dry-run                   with --query: count the selection and show a
                              sample, changing nothing
  --sample <n>                with --dry-run: how many to show (at most 100)
                              (default: 10)
  --yes                       with --query: do not ask for confirmation (needed
                              without a terminal)
  --detach                    with --query: start the operation and print its
                              id, without following it
  -h, --help                  display help for command

A node the execution is at must be in that version with the same type (docs/flows.md).

Examples:
  $ wfx instances move 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f --to 2 --dry-run
  $ wfx instances move 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f --to 2
  $ wfx instances move --query --flow 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --version 1 --state running --to 2 --dry-run

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx instances replay --help 1`] = `
Usage: wfx instances replay [options] [id]

start a new execution of the same flow version at a node, with the variables it
had there

Arguments:
  id                          the processInstanceId to replay (or a unique
                              prefix of it)

Options:
  --from <node>               the node id to start at (the start event: a rerun
                              from the start)
  --set <key=value>           set a variable over those of that moment;
                              repeatable (default: [])
  --data <json>               variables over those of that moment: a JSON
                              object, or @file
  --wait                      wait until it finishes: exit 0 completed, 1
                              failed, 3 cancelled
  --follow                    print its log as it runs (implies --wait)
  --timeout <seconds>         wait (implies --wait) and exit 4 if not finished
                              by then
  --query                     act on every execution the selection flags select
                              (a bulk operation), not on one id
  --flow <processId>          only executions of this flow
  --version <n>               only executions of this flow version
  --state <state>             only executions in this state (choices: "running",
                              "completed", "failed", "cancelled")
  --env <environment>         only executions in this environment (choices:
                              "DEVELOPMENT", "PRODUCTION")
  --error-code <code>         only failed executions with this failure code
  --failed-node <node>        only failed executions that failed at this node
  --correlation-key <key>     only executions with this correlation key
  --waiting <for>             only running executions waiting for this at some
                              node (person: an input node or user task; any:
                              anything) (choices: "person", "event", "timer",
                              "worker", "child", "queue", "any")
  --where <name=value>        only executions with this search attribute (a
                              flow's search:); repeat for more, all must hold
  --started-after <instant>   only executions started at or after this instant
                              (ISO)
  --started-before <instant>  only executions started before this instant (ISO)
  --org <organization>        system keys: only this organization's executions
                              (default: every one's)
  --all                       child executions too (loop iterations,
                              subprocesses, agents' tools); default: top-level
                              only
  --root <id>                 only the tree of this top-level execution: it and
                              everything started under it
  --dry-run                   with --query: count the selection and show a
                              sample, changing nothing
  --sample <n>                with --dry-run: how many to show (at most 100)
                              (default: 10)
  --yes                       with --query: do not ask for confirmation (needed
                              without a terminal)
  --detach                    with --query: start the operation and print its
                              id, without following it
  -h, --help                  display help for command

Examples:
  $ wfx instances replay 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f --from charge
  $ wfx instances replay 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f --from start --wait --json
  $ wfx instances replay --query --flow 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --state failed --yes

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx instances retry --help 1`] = `
Usage: wfx instances retry [options] [id]

retry a failed execution where it failed (same id, variables and history), or
every one a query selects

Arguments:
  id                          the processInstanceId of a failed execution (or a
                              unique prefix of it)

Options:
  --set <key=value>           set a variable first (typed; dotted keys nest);
                              repeatable (default: [])
  --data <json>               variables to set first: a JSON object, or @file
  --wait                      wait until it finishes: exit 0 completed, 1
                              failed, 3 cancelled
  --follow                    print its log as it runs (implies --wait)
  --timeout <seconds>         wait (implies --wait) and exit 4 if not finished
                              by then
  --query                     act on every execution the selection flags select
                              (a bulk operation), not on one id
  --flow <processId>          only executions of this flow
  --version <n>               only executions of this flow version
  --state <state>             only executions in this state (choices: "running",
                              "completed", "failed", "cancelled")
  --env <environment>         only executions in this environment (choices:
                              "DEVELOPMENT", "PRODUCTION")
  --error-code <code>         only failed executions with this failure code
  --failed-node <node>        only failed executions that failed at this node
  --correlation-key <key>     only executions with this correlation key
  --waiting <for>             only running executions waiting for this at some
                              node (person: an input node or user task; any:
                              anything) (choices: "person", "event", "timer",
                              "worker", "child", "queue", "any")
  --where <name=value>        only executions with this search attribute (a
                              flow's search:); repeat for more, all must hold
  --started-after <instant>   only executions started at or after this instant
                              (ISO)
  --started-before <instant>  only executions started before this instant (ISO)
  --org <organization>        system keys: only this organization's executions
                              (default: every one's)
  --all                       child executions too (loop iterations,
                              subprocesses, agents' tools); default: top-level
                              only
  --root <id>                 only the tree of this top-level execution: it and
                              everything started under it
  --dry-run                   with --query: count the selection and show a
                              sample, changing nothing
  --sample <n>                with --dry-run: how many to show (at most 100)
                              (default: 10)
  --yes                       with --query: do not ask for confirmation (needed
                              without a terminal)
  --detach                    with --query: start the operation and print its
                              id, without following it
  -h, --help                  display help for command

Examples:
  $ wfx instances retry 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f
  $ wfx instances retry 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f --set address.zip=10115 --wait
  $ wfx instances retry --query --state failed --error-code HTTP_503 --dry-run

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx jobs list --help 1`] = `
Usage: wfx jobs list [options]

waiting jobs, oldest first: waiting for a worker, locked (by whom, until when),
or in a retry backoff

Options:
  --domain <domain>     one domain only
  --action <action>     one action only
  --limit <n>           at most this many (default: 100)
  --org <organization>  system keys: one organization (default: every one)
  -h, --help            display help for command

Examples:
  $ wfx jobs list
  $ wfx jobs list --domain billing --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx keys activate --help 1`] = `
Usage: wfx keys activate [options] <keyId>

activate a key

Options:
  -h, --help  display help for command

Example:
  $ wfx keys activate 4326020afd8d2dd9

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx keys create --help 1`] = `
Usage: wfx keys create [options]

create an API key; its secret is printed once

Options:
  --name <name>         what it is for
  --role <role>         its permissions (choices: "viewer", "operator",
                        "developer", "admin", "worker", default: "operator")
  --org <organization>  its organization (system admins: any; created if new)
  --system              a system key, bound to no organization (system admins
                        only)
  --per-minute <n>      requests per minute (default unlimited)
  --per-hour <n>        requests per hour (default unlimited)
  --expires <duration>  expires after this long, e.g. 30d
  -h, --help            display help for command

Examples:
  $ wfx keys create --name ci --role developer --per-minute 600 --expires 90d
  $ wfx keys create --name acme-admin --role admin --org acme

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx keys list --help 1`] = `
Usage: wfx keys list [options]

API keys (never their secrets)

Options:
  -h, --help  display help for command

Example:
  $ wfx keys list --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx keys revoke --help 1`] = `
Usage: wfx keys revoke [options] <keyId>

revoke a key for good

Options:
  -h, --help  display help for command

Example:
  $ wfx keys revoke 4326020afd8d2dd9

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx keys suspend --help 1`] = `
Usage: wfx keys suspend [options] <keyId>

suspend a key

Options:
  -h, --help  display help for command

Example:
  $ wfx keys suspend 4326020afd8d2dd9

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx login --help 1`] = `
Usage: wfx login [options]

check an API key against the daemon and keep it for its URL (OS keyring, else a
0600 file)

Options:
  --api-key <key>  the key (or WFX_API_KEY)
  -h, --help       display help for command

Example:
  $ wfx login --url https://wfx.example.com --api-key apk_...

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx logs --help 1`] = `
Usage: wfx logs [options] <id>

the log of an execution; --follow keeps printing until it finishes

Arguments:
  id          the processInstanceId (or a unique prefix of it)

Options:
  --follow    print new entries as they come, until the execution finishes
  -h, --help  display help for command

Examples:
  $ wfx logs 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f
  $ wfx logs 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f --follow --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx memory delete --help 1`] = `
Usage: wfx memory delete [options] <namespace> <key>

forget an entry

Options:
  --org <organization>  system keys: the organization (default: default)
  -h, --help            display help for command

Example:
  $ wfx memory delete chat customer-42

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx memory get --help 1`] = `
Usage: wfx memory get [options] <namespace> <key>

an entry's value (--json: with when it was written and expires)

Options:
  --org <organization>  system keys: the organization (default: default)
  -h, --help            display help for command

Example:
  $ wfx memory get chat customer-42

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx memory list --help 1`] = `
Usage: wfx memory list [options]

live entries (not their values), by namespace then key

Options:
  --namespace <namespace>  one namespace only
  --prefix <prefix>        keys that start with this
  --limit <n>              at most this many entries (default: 100)
  --org <organization>     system keys: the organization (default: default)
  -h, --help               display help for command

Examples:
  $ wfx memory list --namespace chat
  $ wfx memory list --prefix customer- --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx run --help 1`] = `
Usage: wfx run [options] <flow>

start an execution of a published flow, or of a flow file (published to
DEVELOPMENT first)

Arguments:
  flow                     a processId, a flow's name (where unique), or a flow
                           file

Options:
  --data <json>            input variables: a JSON object, or @file
  --set <key=value>        one input variable (typed; dotted keys nest);
                           repeatable (default: [])
  --env <environment>      environment to run in (default PRODUCTION;
                           DEVELOPMENT for a file) (choices: "DEVELOPMENT",
                           "PRODUCTION")
  --version <n>            run this version instead of the active one
  --correlation-key <key>  your reference; catch events correlate on it
  --wait                   wait until it finishes: exit 0 completed, 1 failed, 3
                           cancelled
  --follow                 print its log as it runs (implies --wait)
  --timeout <seconds>      wait (implies --wait) and exit 4 if not finished by
                           then
  --priority <n>           higher starts first where starts wait their turn (a
                           concurrency limit)
  -h, --help               display help for command

Examples:
  $ wfx run 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --set order.id=42 --set order.total=250
  $ wfx run flows/order-approval.yaml --data @order.json --follow
  $ wfx run 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --wait --timeout 60 --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx schedules backfill --help 1`] = `
Usage: wfx schedules backfill [options] <flow>

start one execution per fire time of a flow's schedule from --from to --to, each
with its {scheduledTime} (as its overlap says: one at a time unless allow)

Arguments:
  flow                 a processId, or a flow's name (where unique)

Options:
  --from <iso>         the first instant (fire times at or after it)
  --to <iso>           the last instant (fire times at or before it)
  --schedule <n>       which of the flow's schedule triggers, counted from 1
                       (default: 1)
  --env <environment>  the environment (default PRODUCTION) (choices:
                       "DEVELOPMENT", "PRODUCTION")
  -h, --help           display help for command

Example:
  $ wfx schedules backfill nightly-report --from 2026-11-20T00:00:00Z --to 2026-11-21T00:00:00Z

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx schedules list --help 1`] = `
Usage: wfx schedules list [options]

every schedule of the active flow versions: state, overlap, next and last fire

Options:
  -h, --help  display help for command

Example:
  $ wfx schedules list --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx schedules pause --help 1`] = `
Usage: wfx schedules pause [options] <flow>

pause a flow's schedules in an environment: stop firing until resumed

Arguments:
  flow                 a processId, or a flow's name (where unique)

Options:
  --env <environment>  the environment (default PRODUCTION) (choices:
                       "DEVELOPMENT", "PRODUCTION")
  -h, --help           display help for command

Example:
  $ wfx schedules pause nightly-report --env DEVELOPMENT

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx schedules resume --help 1`] = `
Usage: wfx schedules resume [options] <flow>

resume a flow's schedules in an environment: fire again from now on (fires
missed meanwhile follow missedRuns)

Arguments:
  flow                 a processId, or a flow's name (where unique)

Options:
  --env <environment>  the environment (default PRODUCTION) (choices:
                       "DEVELOPMENT", "PRODUCTION")
  -h, --help           display help for command

Example:
  $ wfx schedules resume nightly-report --env DEVELOPMENT

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx secrets delete --help 1`] = `
Usage: wfx secrets delete [options] <name>

remove a value: a call that names it fails with SECRET_NOT_FOUND

Options:
  --env <environment>   the environment (choices: "DEVELOPMENT", "PRODUCTION",
                        default: "PRODUCTION")
  --org <organization>  the organization (system keys)
  -h, --help            display help for command

Example:
  $ wfx secrets delete WAREHOUSE_TOKEN --env DEVELOPMENT

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx secrets list --help 1`] = `
Usage: wfx secrets list [options]

the secrets set: names, environments and when, never a value

Options:
  --env <environment>   one environment's (default: both)
  --org <organization>  one organization (system keys; default every one)
  -h, --help            display help for command

Example:
  $ wfx secrets list --env PRODUCTION

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx secrets set --help 1`] = `
Usage: wfx secrets set [options] <name>

set a value (the daemon seals it; it is never shown again)

Options:
  --env <environment>   the environment (choices: "DEVELOPMENT", "PRODUCTION",
                        default: "PRODUCTION")
  --stdin               read the value from standard input
  --from-file <file>    read the value from a file (a mounted secret)
  --from-env <var>      read the value from this program's environment variable
                        (a pipeline's secret)
  --org <organization>  the organization (system keys)
  -h, --help            display help for command

Examples:
  $ printf %s "$TOKEN" | wfx secrets set WAREHOUSE_TOKEN --stdin
  $ wfx secrets set WAREHOUSE_TOKEN --from-env CI_WAREHOUSE_TOKEN --env DEVELOPMENT

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx task cancel --help 1`] = `
Usage: wfx task cancel [options] <id> [nodeId]

cancel the task (its errorFlow, else the execution is cancelled)

Arguments:
  id                 the processInstanceId (or a unique prefix of it)
  nodeId             the waiting node (default: the one the execution waits at
                     for input)

Options:
  --data <json>      the input: a JSON object, or @file (default: "{}")
  --set <key=value>  one field (typed; dotted keys nest); repeatable (default:
                     [])
  --take-over        act on a task another person claimed (needs
                     WORKFLOW_PUBLISH)
  -h, --help         display help for command

Example:
  $ wfx task cancel 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f ask

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx task complete --help 1`] = `
Usage: wfx task complete [options] <id> [nodeId]

submit the input (COMPLETE); data that does not fit is refused, the node keeps
waiting

Arguments:
  id                 the processInstanceId (or a unique prefix of it)
  nodeId             the waiting node (default: the one the execution waits at
                     for input)

Options:
  --data <json>      the input: a JSON object, or @file (default: "{}")
  --set <key=value>  one field (typed; dotted keys nest); repeatable (default:
                     [])
  --take-over        act on a task another person claimed (needs
                     WORKFLOW_PUBLISH)
  -h, --help         display help for command

Example:
  $ wfx task complete 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f ask --data '{"approve":true}'

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx task list --help 1`] = `
Usage: wfx task list [options]

input nodes and user tasks waiting for an answer, oldest first, with when each
is due (its timeout, a timer on it) and what it wants (FIELDS: *, required); an
agent's tool task names the agent

Options:
  --flow <processId>  only this flow's
  --limit <n>         at most this many (default: 100)
  -h, --help          display help for command

Examples:
  $ wfx task list
  $ wfx task list --flow 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx task show --help 1`] = `
Usage: wfx task show [options] <id> [nodeId]

what an execution's waiting task wants: its title, each field's type, options,
required, default and label, and a \`task complete\` line to paste

Arguments:
  id          the processInstanceId (or a unique prefix of it)
  nodeId      the waiting node (default: every one the execution waits at)

Options:
  -h, --help  display help for command

Examples:
  $ wfx task show 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f
  $ wfx task show 01a1fdd5 ask --json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx test --help 1`] = `
Usage: wfx test [options] [command] [paths...]

run flows' test files (*.test.yaml) in-process: mocks, a clock of their own, no
daemon

Arguments:
  paths                  test files, or folders to search for *.test.yaml
                         (default: the current folder)

Options:
  --reporter <name>      how the results are written (choices: "spec", "tap",
                         "junit", "json", default: "spec")
  --output <file>        write the report to a file (the summary still goes to
                         the terminal)
  --grep <text>          run only the cases whose name contains this text
  --allow-network        let serviceTasks without a mock, and agents' unmocked
                         MCP servers, call the network
  --coverage             report each flow's nodes reached and branches taken,
                         and what no case took
  --coverage-min <pct>   fail (exit 1) when the coverage of all flows together
                         is under this percentage
  --send-coverage        send each flow's coverage to the daemon, whose console
                         draws it on the version's diagram (implies --coverage)
  --watch                run again whenever a test file or flow file under the
                         paths changes (Ctrl-C stops)
  -h, --help             display help for command

Commands:
  record [options] <id>  write an ended execution as a test case: its start,
                         answers, events, work results as mocks, path and end
  schema                 the JSON Schema of test files, for editors

Exit codes: 0 every case passed, 1 a case failed, 2 a test file or its flow is invalid (with --watch: the last run's).

Examples:
  $ wfx test
  $ wfx test flows/order.test.yaml --grep "big orders"
  $ wfx test --coverage --coverage-min 80
  $ wfx test --reporter junit --output report.xml

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx test record --help 1`] = `
Usage: wfx test record [options] <id>

write an ended execution as a test case: its start, answers, events, work
results as mocks, path and end

Arguments:
  id             the processInstanceId (or a unique prefix of it)

Options:
  --out <file>   the test file to write, or to add the case to (default: <flow
                 file>.test.yaml)
  --flow <file>  the flow's file, as the test file names it; written from the
                 daemon when missing
  --name <name>  the case name (default: "recorded <id>")
  -h, --help     display help for command

Secrets are not copied: each {env.NAME} the flow uses gets a placeholder value.

Example:
  $ wfx test record 01a2174a --out flows/order-approval.test.yaml && wfx test flows/

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx test schema --help 1`] = `
Usage: wfx test schema [options]

the JSON Schema of test files, for editors

Options:
  -h, --help  display help for command

Example:
  $ wfx test schema > schemas/test.schema.json
  then, first line of a test file:  # yaml-language-server: $schema=../schemas/test.schema.json

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx tui --help 1`] = `
Usage: wfx tui [options]

the operator console: executions live, waiting tasks answered with a form, flows
and their runs, trigger health (keys: ? for help, q to quit)

Options:
  -h, --help  display help for command

Example:
  $ wfx tui --url http://127.0.0.1:7878

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx webhooks create --help 1`] = `
Usage: wfx webhooks create [options]

register a webhook; prints its endpoint URLs and signing secrets (shown this
once)

Options:
  --name <name>               the name flows' webhook triggers use
  --provider <provider>       who sends (choices: "GITHUB", "STRIPE", "SLACK",
                              "STANDARD", "CUSTOM")
  --per-environment           separate DEVELOPMENT and PRODUCTION endpoints,
                              each with its own token and secret
  --secret <secret>           the signing secret the provider has (generated
                              when absent)
  --no-auth                   no signature check (authType NONE): anyone with
                              the URL can trigger
  --signature-header <name>   CUSTOM: the header with the signature
  --algorithm <alg>           CUSTOM: the HMAC hash (choices: "sha1", "sha256",
                              "sha512")
  --encoding <enc>            CUSTOM: how the signature is written (choices:
                              "hex", "base64")
  --prefix <text>             CUSTOM: text before the signature, e.g. sha256=
  --event-type-header <name>  CUSTOM: the header naming the event type
  --event-type-path <path>    CUSTOM: the dotted path of the event type in the
                              body
  --event-id-header <name>    CUSTOM: the header with the event id (idempotency)
  --event-id-path <path>      CUSTOM: the dotted path of the event id in the
                              body
  --max-body-bytes <size>     the largest body a delivery may have: bytes, or
                              KiB/MiB (default 1MiB, at most 25MiB); a larger
                              one is answered 413 and logged
  --respond-within <seconds>  answer each delivery with the output of the
                              execution it starts (its status and body) once it
                              ends within so many seconds, else 202
  -h, --help                  display help for command

Examples:
  $ wfx webhooks create --name github --provider GITHUB --secret "$GITHUB_WEBHOOK_SECRET"
  $ wfx webhooks create --name stripe --provider STRIPE --per-environment

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx webhooks delete --help 1`] = `
Usage: wfx webhooks delete [options] <name>

delete a registration; its endpoints stop at once

Options:
  -h, --help  display help for command

Example:
  $ wfx webhooks delete github

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx webhooks deliveries --help 1`] = `
Usage: wfx webhooks deliveries [options] <name> [deliveryId]

the last deliveries of a registration: signature verdict, event, what started,
or why nothing did; with a delivery id, that one with its headers and body

Arguments:
  name
  deliveryId  show this delivery: its record, kept headers (no signature) and
              body

Options:
  -h, --help  display help for command

Examples:
  $ wfx webhooks deliveries github
  $ wfx webhooks deliveries github 01a1fe30-edc6-7617-bd1f-84feb7474dfd

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx webhooks list --help 1`] = `
Usage: wfx webhooks list [options]

webhook registrations and their endpoint URLs (no secrets)

Options:
  -h, --help  display help for command

Example:
  $ wfx webhooks list

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx webhooks listen --help 1`] = `
Usage: wfx webhooks listen [options] <name>

each delivery of a registration as it arrives: its event, the signature's
verdict, what it started or why nothing

Options:
  -h, --help  display help for command

Runs until Ctrl-C (exit 0). With --json, one delivery a line.

Example:
  $ wfx webhooks listen github

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx webhooks redeliver --help 1`] = `
Usage: wfx webhooks redeliver [options] <name> <deliveryId>

process a verified delivery's kept payload again as a new delivery, starting the
flows subscribed now (no duplicate check)

Arguments:
  name
  deliveryId  a delivery of \`wfx webhooks deliveries NAME\`

Options:
  -h, --help  display help for command

Example:
  $ wfx webhooks redeliver github 01a1fe30-edc6-7617-bd1f-84feb7474dfd

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx webhooks rotate --help 1`] = `
Usage: wfx webhooks rotate [options] <name>

a new signing secret (shown once); the previous one keeps working for a while

Options:
  --env <environment>              only this endpoint (choices: "ALL",
                                   "DEVELOPMENT", "PRODUCTION")
  --previous-valid-for <duration>  how long the previous secret still verifies
                                   (default: "24h")
  -h, --help                       display help for command

Example:
  $ wfx webhooks rotate stripe --previous-valid-for 1h

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx webhooks send --help 1`] = `
Usage: wfx webhooks send [options] <name>

sign a payload as the provider would, post it to the endpoint, and say what it
started: test a webhook flow without a tunnel

Options:
  --payload <file>       the body to send (JSON, or a form body)
  --env <environment>    which endpoint (choices: "ALL", "DEVELOPMENT",
                         "PRODUCTION")
  --event <type>         the event type, for providers that carry it in a header
                         (GitHub, custom)
  --content-type <type>  the body's content type (default: "application/json")
  --replay               send the payload as it is, its event id kept: a
                         provider's redelivery (a duplicate)
  -h, --help             display help for command

Each send is a new event (a fresh event id and time) unless --replay.
Exit 0 when it started an execution, 1 when it started none (the delivery log says why).

Example:
  $ wfx webhooks send github --payload pull_request.json --event pull_request

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx webhooks update --help 1`] = `
Usage: wfx webhooks update [options] <name>

change a registration's limits; its endpoints and secrets stay

Options:
  --max-body-bytes <size>     the largest body a delivery may have: bytes, or
                              KiB/MiB (at most 25MiB)
  --respond-within <seconds>  answer each delivery with the output of the
                              execution it starts (its status and body) once it
                              ends within so many seconds, else 202
  --respond-at-once           answer each delivery at once again (200 {received:
                              true})
  -h, --help                  display help for command

Examples:
  $ wfx webhooks update github --max-body-bytes 5MiB
  $ wfx webhooks update signup-form --respond-within 10

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx webhooks verify --help 1`] = `
Usage: wfx webhooks verify [options]

check one captured delivery offline with the daemon's own verifier: exit 0
valid, 1 invalid (and why)

Options:
  --provider <provider>      who sent it (choices: "GITHUB", "STRIPE", "SLACK",
                             "STANDARD", "CUSTOM")
  --secret <secret>          the signing secret
  --header <header>          "Name: value" of the delivery; repeatable (default:
                             [])
  --body <file>              the raw body as received
  --at <unixSeconds>         judge timestamps at this instant (default now)
  --signature-header <name>  CUSTOM: the signature header
  --algorithm <alg>          CUSTOM: the HMAC hash (choices: "sha1", "sha256",
                             "sha512", default: "sha256")
  --encoding <enc>           CUSTOM: the signature encoding (choices: "hex",
                             "base64", default: "hex")
  --prefix <text>            CUSTOM: text before the signature
  -h, --help                 display help for command

Example:
  $ wfx webhooks verify --provider STRIPE --secret whsec_... --header "Stripe-Signature: t=1700000000,v1=5257a8..." --body event.json --at 1700000000

`

exports[`dist/test/cli/help.test.js > TAP > help of every command > wfx worker run --help 1`] = `
Usage: wfx worker run [options] [module]

Arguments:
  module                      a JavaScript module exporting one function per
                              action: (input, job) => output

Options:
  --command <command>         instead of a module: a program run per job (job
                              JSON on stdin, output JSON on stdout)
  --domain <domain>           the domain (default: the module's \`domain\` export)
  --actions <actions>         with --command: only these actions,
                              comma-separated (default: every one)
  --concurrency <n>           jobs at once at most (default: 4)
  --lock-duration <duration>  how long a job stays locked to this worker between
                              heartbeats (default: 60000)
  --stop-timeout <duration>   on SIGTERM, wait this long for jobs in hand before
                              releasing them (default: 10000)
  --name <name>               the worker name (default: host, pid and a random
                              suffix)
  --org <organization>        system keys: the organization whose jobs (default:
                              default)
  -h, --help                  display help for command

Examples:
  $ wfx worker run ./billing.js --domain billing --concurrency 8
  $ wfx worker run --domain billing --command 'python3 handle.py'

`
