// The Broadcasts pages: the list (by status), a new broadcast's composer, and a broadcast's page (its
// composer, preview, test and review while a draft; its approval, schedule or results after).
import { Route, Routes } from 'react-router';
import { BroadcastPage } from './broadcast.tsx';
import { BroadcastList } from './list.tsx';
import { NewBroadcast } from './composer.tsx';

export default function Broadcasts() {
  return (
    <Routes>
      <Route index element={<BroadcastList />} />
      <Route path="new" element={<NewBroadcast />} />
      <Route path=":id" element={<BroadcastPage />} />
    </Routes>
  );
}
