/*
 * The console: the header, the routes (the execution and flow pages, with the diagram and its
 * layout, load when first shown), one lifecycle event stream and one read of the session for
 * the page.
 */
import lazy, { ErrorBoundary } from 'preact-iso/lazy';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso/router';
import type { ComponentType } from 'preact';
import { useEffect, useMemo, useRef } from 'preact/hooks';
import { LiveEvents } from './api/live-events.js';
import { EventsContext } from './components/events-context.js';
import { Header } from './components/header.js';
import { SessionProvider } from './components/session-provider.js';
import { ADMIN_BASE, ADMIN_PAGES } from './model/admin-pages.js';
import ExecutionsPage from './pages/executions-page.js';
import FailuresPage from './pages/failures-page.js';
import FlowsPage from './pages/flows-page.js';
import SignInPage from './pages/sign-in-page.js';

const ExecutionPage = lazy(() => import('./pages/execution-page.js'));
const FlowPage = lazy(() => import('./pages/flow-page.js'));
const WorkersPage = lazy(() => import('./pages/admin/workers-page.js'));
const ProvidersPage = lazy(() => import('./pages/admin/providers-page.js'));
const MemoryAdminPage = lazy(() => import('./pages/admin/memory-page.js'));
const KeysPage = lazy(() => import('./pages/admin/keys-page.js'));
const SessionsPage = lazy(() => import('./pages/admin/sessions-page.js'));
const SecretsPage = lazy(() => import('./pages/admin/secrets-page.js'));
const EnvironmentPage = lazy(() => import('./pages/admin/environment-page.js'));
const ComparePage = lazy(() => import('./pages/compare-page.js'));
const RunPage = lazy(() => import('./pages/run-page.js'));
const BulkListPage = lazy(() => import('./pages/bulk-list-page.js'));
const BulkPage = lazy(() => import('./pages/bulk-page.js'));
const TriggersPage = lazy(() => import('./pages/triggers-page.js'));
const WebhookPage = lazy(() => import('./pages/webhook-page.js'));
const TasksPage = lazy(() => import('./pages/tasks-page.js'));

/** The paths the console routes itself; any other link (/auth/login, /openapi.json) is a page load. */
export const APP_PATHS = /^\/(bulk|compare|executions|failures|flows|manage|sign-in|tasks|triggers)?(\/|\?|#|$)/;

/** `/`: the executions list. */
function Home() {
  const { route } = useLocation();
  useEffect(() => route('/executions', true), [route]);
  return null;
}

/** `/manage`: the admin section's first page. */
function AdminHome() {
  const { route } = useLocation();
  useEffect(() => route(ADMIN_PAGES[0]!.href, true), [route]);
  return null;
}

/** Any other path. */
function NotFound() {
  return (
    <>
      <h1>Not found</h1>
      <p>
        The console has no such page. <a href="/executions">See the executions</a>.
      </p>
    </>
  );
}

/** The console's pages by path, tried in this order: the first that matches is shown. */
const ROUTES: ReadonlyArray<readonly [path: string, page: ComponentType]> = [
  ['/', Home],
  ['/sign-in', SignInPage],
  ['/executions', ExecutionsPage],
  ['/executions/:id', ExecutionPage],
  ['/failures', FailuresPage],
  ['/compare', ComparePage],
  ['/flows', FlowsPage],
  ['/flows/:processId', FlowPage],
  [ADMIN_BASE, AdminHome],
  [`${ADMIN_BASE}/workers`, WorkersPage],
  [`${ADMIN_BASE}/providers`, ProvidersPage],
  [`${ADMIN_BASE}/memory`, MemoryAdminPage],
  [`${ADMIN_BASE}/keys`, KeysPage],
  [`${ADMIN_BASE}/sessions`, SessionsPage],
  [`${ADMIN_BASE}/secrets`, SecretsPage],
  [`${ADMIN_BASE}/environment`, EnvironmentPage],
  ['/flows/:processId/run', RunPage],
  ['/bulk', BulkListPage],
  ['/bulk/:bulkId', BulkPage],
  ['/triggers', TriggersPage],
  ['/triggers/webhooks/:name', WebhookPage],
  ['/tasks', TasksPage],
  ['/tasks/:id/:nodeId', TasksPage],
];

/** The page around the routes. */
function Shell() {
  const { path } = useLocation();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  // After a navigation, focus goes to the new page (a screen reader reads it from its top).
  const onRouteChange = () => {
    if (first.current) first.current = false;
    else main.current?.focus();
  };
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      {path !== '/sign-in' && <Header />}
      <main id="main" tabIndex={-1} ref={main}>
        <ErrorBoundary>
          <Router onRouteChange={onRouteChange}>
            {/* No key: a page two paths share (TasksPage) stays mounted going from one to the other. */}
            {ROUTES.map(([path, page]) => (
              <Route path={path} component={page} />
            ))}
            <Route default component={NotFound} />
          </Router>
        </ErrorBoundary>
      </main>
    </>
  );
}

/** The console app. */
export function App() {
  const events = useMemo(() => new LiveEvents(), []);
  return (
    <EventsContext.Provider value={events}>
      <LocationProvider scope={APP_PATHS}>
        <SessionProvider>
          <Shell />
        </SessionProvider>
      </LocationProvider>
    </EventsContext.Provider>
  );
}
