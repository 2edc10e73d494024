/**
 * cluster-serial's setup file: each of its files takes the serial lock before it is collected
 * and lets go after its last hook, so they run one at a time although their group has several
 * workers (the unit files use the others). The wait is here, at import, where no hook timeout
 * counts it.
 */
import { afterAll, inject } from 'vitest';
import { takeLock } from './serial-lock.ts';

const release = await takeLock(inject('serialLock'));
afterAll(release);
