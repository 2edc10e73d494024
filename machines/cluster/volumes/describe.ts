/** What a user reads about volumes: an expansion in flight, a refusal, and VolumesExpanded once done. */
import type { ConcernWords } from '../concern.ts';
import { ConditionReason } from '../../../api/conditions.ts';
import { GROW_RECHECK_MS, growProgress, volumesShowSize, type VolumesView } from './rules.ts';

/** A step of an expansion: `growing volumes to 128Mi: demo-0 done, demo-1 waiting`. */
export function growMessage(sub: string, c: VolumesView): string {
  const g = c.grow;
  if (!g) return c.volumeSize ? `growing volumes to ${c.volumeSize.quantity}` : 'growing volumes to storage.size';
  const head = `growing volumes to ${g.size.quantity}: ${growProgress(c, g.size.bytes)}`;
  if (sub.startsWith('patching'))
    return `${head}; asking the claim of ${g.member ?? 'the next member'} for ${g.size.quantity}`;
  return `${head}; waiting until every claim's capacity shows it (the volume and its file system grown)`;
}

/** The StorageClass refused: what the user does, and when it is tried again. */
export function refusedMessage(c: VolumesView): string {
  const r = c.growRefused;
  if (!r) return 'volume expansion refused';
  const again = new Date(r.at + GROW_RECHECK_MS).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return (
    `storage.size ${r.quantity} is not applied to the members' volumes: ${r.message}. ` +
    `Tried again at ${again}, or when storage.size changes; members made meanwhile get ${r.quantity}`
  );
}

/** The volumes' words: their steps' messages, and VolumesExpanded once every claim shows the size. */
export const volumeWords: ConcernWords = {
  describe: { resizingVolumes: growMessage, volumesRefused: (_, c) => refusedMessage(c) },
  completes: {
    resizingVolumes: {
      condition: 'VolumesExpanded',
      message: (c) =>
        `every member's volume claim shows ${c.volumeSize?.quantity ?? ''}: ${c.volumeSize ? growProgress(c, c.volumeSize.bytes) : ''}`,
      // Every member that stays has a bound claim showing spec.storage.size, its file system grown.
      done: (c) => volumesShowSize(c),
      running: {
        reason: ConditionReason.ResizingVolumes,
        message: (c) =>
          c.volumeSize
            ? `growing volumes to ${c.volumeSize.quantity}: ${growProgress(c, c.volumeSize.bytes) || 'no claim listed yet'}`
            : 'growing volumes to storage.size',
      },
    },
  },
  holds: { volumesRefused: { condition: 'VolumesExpanded', reason: ConditionReason.ExpansionNotAllowed } },
};
