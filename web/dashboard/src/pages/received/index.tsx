// The Received pages: mail that came in at the team's receiving domains at /received, one message at
// /received/:id.
import { Route, Routes } from 'react-router';
import { ReceivedPage } from './detail.tsx';
import { ReceivedList } from './list.tsx';

export default function Received() {
  return (
    <Routes>
      <Route index element={<ReceivedList />} />
      <Route path=":id" element={<ReceivedPage />} />
    </Routes>
  );
}
