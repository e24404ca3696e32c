// The Domains pages: the team's domains (and adding one) at /domains, one domain's records, checks and
// settings at /domains/:id.
import { Route, Routes } from 'react-router';
import { DomainPage } from './detail.tsx';
import { DomainList } from './list.tsx';

export default function Domains() {
  return (
    <Routes>
      <Route index element={<DomainList />} />
      <Route path=":id" element={<DomainPage />} />
    </Routes>
  );
}
