// The Audience pages: contacts (/audience, one at /audience/contacts/:id), segments, topics, contact
// properties, imports and signup forms, under one heading with a navigation between them.
import { Link, NavLink, Route, Routes, useLocation } from 'react-router';
import { ContactPage } from './contact.tsx';
import { ImportPage, Imports, NewImport } from './imports.tsx';
import { Contacts } from './contacts.tsx';
import { FormPage, NewForm } from './forms-detail.tsx';
import { Forms } from './forms.tsx';
import { Properties } from './properties.tsx';
import { Segments } from './segments.tsx';
import { Topics } from './topics.tsx';

const SECTIONS = [
  { to: '/audience', label: 'Contacts', end: true },
  { to: '/audience/segments', label: 'Segments', end: false },
  { to: '/audience/topics', label: 'Topics', end: false },
  { to: '/audience/properties', label: 'Properties', end: false },
  { to: '/audience/imports', label: 'Imports', end: false },
  { to: '/audience/forms', label: 'Forms', end: false },
];

export default function Audience() {
  const { pathname } = useLocation();
  // A contact's page belongs to Contacts.
  const contactPage = pathname.startsWith('/audience/contacts/');
  return (
    <>
      <nav aria-label="Audience" className="subnav">
        <ul>
          {SECTIONS.map((section) => (
            <li key={section.to}>
              {contactPage && section.label === 'Contacts' ? (
                // A contact's page is under Contacts: its link shows as the current section.
                <Link to={section.to} className="active" aria-current="page">
                  {section.label}
                </Link>
              ) : (
                <NavLink to={section.to} end={section.end}>
                  {section.label}
                </NavLink>
              )}
            </li>
          ))}
        </ul>
      </nav>
      <Routes>
        <Route index element={<Contacts />} />
        <Route path="contacts/:id" element={<ContactPage />} />
        <Route path="segments" element={<Segments />} />
        <Route path="topics" element={<Topics />} />
        <Route path="properties" element={<Properties />} />
        <Route path="imports" element={<Imports />} />
        <Route path="imports/new" element={<NewImport />} />
        <Route path="imports/:id" element={<ImportPage />} />
        <Route path="forms" element={<Forms />} />
        <Route path="forms/new" element={<NewForm />} />
        <Route path="forms/:id" element={<FormPage />} />
      </Routes>
    </>
  );
}
