// The Emails pages: the team's emails with their filters at /emails, one email at /emails/:id.
import { Route, Routes } from 'react-router';
import { EmailPage } from './detail.tsx';
import { EmailList } from './list.tsx';

export default function Emails() {
  return (
    <Routes>
      <Route index element={<EmailList />} />
      <Route path=":id" element={<EmailPage />} />
    </Routes>
  );
}
