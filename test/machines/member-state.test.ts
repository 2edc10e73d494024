import { describe, expect, it } from 'vitest';
import { etcdMember } from '../../api/v1alpha1/etcdmember.ts';
import { describeMember } from '../../machines/describe.ts';
import { initialMemberContext, type MemberContext } from '../../machines/member-decide.ts';
import { memberMachine } from '../../machines/member.ts';
import { MEMBER_STATES, isMemberState, shownState } from '../../machines/member-state.ts';

interface Node {
  readonly states: Readonly<Record<string, Node>>;
}

/** Every dotted state path of a machine, parents included. */
const paths = (node: Node, prefix = ''): string[] =>
  Object.entries(node.states).flatMap(([key, child]) => [`${prefix}${key}`, ...paths(child, `${prefix}${key}.`)]);

const base = initialMemberContext({
  member: { namespace: 'default', name: 'demo-1', uid: 'm-1', cluster: 'demo' },
  bootstrap: false,
  medium: '',
});
/** A context whose Pod runs: a restart waiting for it to be Ready reads as notReady. */
const running: MemberContext = {
  ...base,
  pod: { uid: 'p1', phase: 'Running', ready: false, deleting: false, restarts: 0 },
};
/** A context whose spec names an older version than its Pod runs: a restart onto it reads as downgrading. */
const goingDown: MemberContext = { ...running, version: '3.5.35', ranVersion: '3.6.16' };
/** A context whose spec names the version it runs: a restart onto it (new CAs, --force-new-cluster) reads as reconfiguring. */
const staying: MemberContext = {
  ...running,
  version: '3.6.16',
  ranVersion: '3.6.16',
  pod: { ...running.pod!, version: '3.6.16' },
};

describe('member states: one list for the code and the CRD', () => {
  it('every state the member machine can be in shows as one of MEMBER_STATES', () => {
    const shown = new Set(
      paths(memberMachine.root as unknown as Node).flatMap((p) =>
        [base, running, goingDown, staying].map((c) => describeMember(p, c).state),
      ),
    );
    expect([...shown].filter((s) => s === undefined || !isMemberState(s))).toEqual([]);
    // And the list names nothing the member never shows.
    expect(MEMBER_STATES.filter((s) => !shown.has(s))).toEqual([]);
  });

  it('a path whose top the member machine lacks shows no state', () => {
    expect(shownState('promoting', false)).toBeUndefined();
    expect(shownState('scalingUp.joining', false)).toBeUndefined();
    expect(shownState('restarting.awaitingReady', true)).toBe('notReady');
    expect(shownState('restarting.awaitingReady', false)).toBe('restarting');
    expect(shownState('upgrading.stoppingPod', true, 'down')).toBe('downgrading');
    expect(shownState('upgrading.stoppingPod', true, 'none')).toBe('reconfiguring');
    expect(shownState('upgrading.stoppingPod', true, 'up')).toBe('upgrading');
    expect(shownState('restarting.awaitingReady', false, 'down')).toBe('restarting');
    expect(shownState('restarting.awaitingReady', false, 'none')).toBe('restarting');
  });

  it("the CRD's enum of status.state is MEMBER_STATES", () => {
    const status = etcdMember.status as unknown as { properties: { state: { enum?: readonly string[] } } };
    expect(status.properties.state.enum).toEqual(MEMBER_STATES);
  });
});
