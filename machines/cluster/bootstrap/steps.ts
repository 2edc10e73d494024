/**
 * The static start by name: its guards, what it writes into the context, and the parameters of
 * the createMember of each planned member (rules.ts says which is next).
 */
import type { CreateMemberParams } from '../../types.ts';
import {
  nextToCreate,
  planStands,
  planStart,
  startQuorum,
  startsWhole,
  type BootstrapContext,
  type BootstrapView,
} from './rules.ts';

/** What the start's parameters read besides the rules' view. */
interface StartView extends BootstrapView {
  readonly spec: { readonly version: string } | null;
  readonly target: { readonly replicas: number; readonly version: string; readonly trust?: string } | null;
}

type Ctx = { context: StartView };

/** Guards of the start, by name. */
export const bootstrapGuards = {
  startsWhole: ({ context: c }: Ctx) => startsWhole(c),
  startCreated: ({ context: c }: Ctx) => c.start != null && nextToCreate(c) === undefined,
  startQuorum: ({ context: c }: Ctx) => startQuorum(c),
};

type Update = (
  c: StartView,
  e: { readonly type: string; readonly at: number },
) => Partial<BootstrapContext> & {
  joining?: null;
  nextOrdinal?: number;
  memberNames?: readonly string[];
  etcdStale?: boolean;
};

/** Context updates of the start, by name. */
export const bootstrapUpdates = {
  // A start entered again (after a failure) keeps its plan once a member of it exists; before
  // that nothing depends on it, and a new one takes the spec as it is now. A seed a journal
  // written before static starts chose on entering `seeding` was never created: its name is the first.
  planStart: (c) => {
    if (planStands(c)) return {};
    const start = planStart(c);
    const after = (start.members.at(-1)?.ordinal ?? c.nextOrdinal - 1) + 1;
    return { start, joining: null, nextOrdinal: Math.max(c.nextOrdinal, after) };
  },
  recordStartCreated: (c) => {
    const next = nextToCreate(c);
    return next ? { memberNames: [...c.memberNames, next.name] } : {};
  },
  finishStart: () => ({ start: null, etcdStale: true }),
} satisfies Record<string, Update>;

/** createMember for the next planned member: a member of the new cluster, with the whole initial cluster. */
export const startMemberParams = ({ context: c }: Ctx): CreateMemberParams => {
  const next = nextToCreate(c);
  return {
    member: next?.name ?? '',
    ordinal: next?.ordinal ?? -1,
    bootstrap: true,
    initialCluster: c.start?.initialCluster ?? '',
    version: c.target?.version ?? c.spec?.version ?? '',
    ...(c.target?.trust !== undefined ? { trust: c.target.trust } : {}),
  };
};
