// The Templates pages: the list (/templates) and one template's editor (/templates/:id). The editor, with
// CodeMirror, is a chunk of its own, loaded when a template is opened.
import { lazy, Suspense } from 'react';
import { Route, Routes } from 'react-router';
import { Loading } from '../../ui/feedback.tsx';
import { TemplateList } from './list.tsx';

const TemplateEditor = lazy(() => import('./editor.tsx'));

export default function Templates() {
  return (
    <Routes>
      <Route index element={<TemplateList />} />
      <Route
        path=":id"
        element={
          <Suspense fallback={<Loading />}>
            <TemplateEditor />
          </Suspense>
        }
      />
    </Routes>
  );
}
