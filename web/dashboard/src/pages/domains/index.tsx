// The Domains pages: the team's domains (and adding one) at /domains, one domain's records, checks and
// settings at /domains/:id, a claim on another team's domain at /domains/claims/:domainId.
import { Route, Routes } from 'react-router';
import { ClaimPage } from './claim.tsx';
import { DomainPage } from './detail.tsx';
import { DomainList } from './list.tsx';

export default function Domains() {
  return (
    <Routes>
      <Route index element={<DomainList />} />
      <Route path="claims/:domainId" element={<ClaimPage />} />
      <Route path=":id" element={<DomainPage />} />
    </Routes>
  );
}
