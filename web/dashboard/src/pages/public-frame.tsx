// The frame of the pages a person sees before signing in: sign-in, the first account, an invite, a reset.
import type { ReactNode } from 'react';
import { useNavigate, useSearchParams } from 'react-router';

export function PublicFrame({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main id="main" className="public">
      <div className="card public-card">
        <p className="brand">Postline</p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

/** The `token` of a link's URL. */
export function useLinkToken(): string {
  const [params] = useSearchParams();
  return params.get('token') ?? '';
}

/** Goes to the page the person was sent from (`?next=`), or to the dashboard's first page. */
export function useGoNext() {
  const navigate = useNavigate();
  const [params] = useSearchParams();
  return () => {
    const next = params.get('next');
    // Only a path of this app: never another site (an open redirect).
    void navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/', { replace: true });
  };
}
