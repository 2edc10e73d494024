/**
 * Runs before every unit file (the unit project's setupFiles), so its hooks belong to each file
 * even where files share a worker and its loaded modules.
 */
import { afterAll } from 'vitest';
import { removeTempDbs } from './journal/helpers.ts';

afterAll(removeTempDbs);
