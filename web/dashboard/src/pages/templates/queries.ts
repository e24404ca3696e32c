// What the Templates pages read: a template, its versions, and the names of the people and API keys that
// wrote them (the members and keys lists are admins' only, so a member sees their own name and the others'
// kinds).
import { useQuery } from '@tanstack/react-query';
import type { ApiShape } from '@postline/contracts';
import { get } from '../../api/client.ts';
import { useApiKeyNames, useMembers } from '../../api/people.ts';
import { useIsAdmin, useSession } from '../../session.tsx';

export const TEMPLATES = 'templates';

export type Template = ApiShape<'Template'>;
export type TemplateItem = ApiShape<'TemplateList'>['data'][number];
export type TemplateVersion = ApiShape<'TemplateVersion'>;
export type VersionItem = ApiShape<'TemplateVersionList'>['data'][number];
export type Author = VersionItem['author'];

export function useTemplate(id: string) {
  return useQuery({
    queryKey: [TEMPLATES, 'one', id],
    queryFn: () => get<Template>(`/templates/${encodeURIComponent(id)}`),
  });
}

/** The newest 50 versions of a template. */
export function useVersions(id: string) {
  return useQuery({
    queryKey: [TEMPLATES, 'versions', id],
    queryFn: () => get<ApiShape<'TemplateVersionList'>>(`/templates/${encodeURIComponent(id)}/versions`, { limit: 50 }),
  });
}

/** How an author is named: a person's name and email, or "API key <name>". */
export function useAuthorName(): (author: Author) => { name: string; detail?: string } {
  const session = useSession();
  const isAdmin = useIsAdmin();
  const members = useMembers({ enabled: isAdmin });
  const keys = useApiKeyNames({ enabled: isAdmin });
  return (author) => {
    if (!author) return { name: 'Unknown', detail: 'written before authors were recorded' };
    if (author.type === 'api_key') {
      const key = keys.data?.data.find((k) => k.id === author.id);
      return { name: key ? `API key ${key.name}` : 'An API key', detail: key ? undefined : author.id };
    }
    if (session.user?.id === author.id) return { name: session.user.name, detail: session.user.email };
    const member = members.data?.data.find((m) => m.id === author.id);
    return member ? { name: member.name, detail: member.email } : { name: 'A team member', detail: author.id };
  };
}
