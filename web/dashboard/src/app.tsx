// The dashboard's pages. Signing in, the first account, invites and password resets are open; every other
// page needs a session, and sends to the sign-in page (coming back after) without one. Each page is its own
// chunk, loaded when first opened, so the first load stays small.
import { lazy, Suspense, type ReactNode } from 'react';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { Layout } from './layout.tsx';
import { SessionProvider, useSessionQuery } from './session.tsx';
import { ErrorMessage, Loading } from './ui/feedback.tsx';

const SignIn = lazy(() => import('./pages/sign-in.tsx'));
const Setup = lazy(() => import('./pages/setup.tsx'));
const AcceptInvite = lazy(() => import('./pages/accept-invite.tsx'));
const ResetPassword = lazy(() => import('./pages/reset-password.tsx'));
const ForgotPassword = lazy(() => import('./pages/forgot-password.tsx'));
const Account = lazy(() => import('./pages/account.tsx'));
const ApiKeys = lazy(() => import('./pages/api-keys.tsx'));
const Domains = lazy(() => import('./pages/domains/index.tsx'));
const Emails = lazy(() => import('./pages/emails/index.tsx'));
const Received = lazy(() => import('./pages/received/index.tsx'));
const DevInbox = lazy(() => import('./pages/dev-inbox.tsx'));
const Audience = lazy(() => import('./pages/audience/index.tsx'));
const Templates = lazy(() => import('./pages/templates/index.tsx'));
const Broadcasts = lazy(() => import('./pages/broadcasts/index.tsx'));
const Metrics = lazy(() => import('./pages/metrics.tsx'));
const Deliverability = lazy(() => import('./pages/deliverability.tsx'));
const Webhooks = lazy(() => import('./pages/webhooks/index.tsx'));
const Logs = lazy(() => import('./pages/logs/index.tsx'));
const Suppressions = lazy(() => import('./pages/suppressions.tsx'));
const AuditLog = lazy(() => import('./pages/audit-log.tsx'));
const Team = lazy(() => import('./pages/team.tsx'));

export function App() {
  return (
    <Suspense fallback={<Loading />}>
      <Routes>
        <Route path="/sign-in" element={<SignIn />} />
        <Route path="/setup" element={<Setup />} />
        <Route path="/invite" element={<AcceptInvite />} />
        <Route path="/reset-password" element={<ResetPassword />} />
        <Route path="/forgot-password" element={<ForgotPassword />} />
        <Route path="/" element={<Navigate to="/domains" replace />} />
        <Route path="/account" element={<SignedIn page={<Account />} />} />
        <Route path="/api-keys" element={<SignedIn page={<ApiKeys />} />} />
        <Route path="/domains/*" element={<SignedIn page={<Domains />} />} />
        <Route path="/emails/*" element={<SignedIn page={<Emails />} />} />
        <Route path="/received/*" element={<SignedIn page={<Received />} />} />
        <Route path="/dev-inbox" element={<SignedIn page={<DevInbox />} />} />
        <Route path="/dev-inbox/:id" element={<SignedIn page={<DevInbox />} />} />
        <Route path="/metrics" element={<SignedIn page={<Metrics />} />} />
        <Route path="/deliverability" element={<SignedIn page={<Deliverability />} />} />
        <Route path="/audience/*" element={<SignedIn page={<Audience />} />} />
        <Route path="/templates/*" element={<SignedIn page={<Templates />} />} />
        <Route path="/broadcasts/*" element={<SignedIn page={<Broadcasts />} />} />
        <Route path="/webhooks/*" element={<SignedIn page={<Webhooks />} />} />
        <Route path="/logs/*" element={<SignedIn page={<Logs />} />} />
        <Route path="/suppressions" element={<SignedIn page={<Suppressions />} />} />
        <Route path="/audit-log" element={<SignedIn page={<AuditLog />} />} />
        <Route path="/team" element={<SignedIn page={<Team />} />} />
        <Route path="*" element={<SignedIn page={<NotFound />} />} />
      </Routes>
    </Suspense>
  );
}

function SignedIn({ page }: { page: ReactNode }) {
  const { data: session, error, isPending } = useSessionQuery();
  const location = useLocation();
  if (isPending) return <Loading />;
  if (error) return <ErrorMessage error={error} />;
  if (!session) {
    const next = location.pathname + location.search;
    return <Navigate to={`/sign-in?next=${encodeURIComponent(next)}`} replace />;
  }
  return (
    <SessionProvider session={session}>
      <Layout>
        <Suspense fallback={<Loading />}>{page}</Suspense>
      </Layout>
    </SessionProvider>
  );
}

function NotFound() {
  return (
    <>
      <h1>Page not found</h1>
      <p>There is no page at this address.</p>
    </>
  );
}
