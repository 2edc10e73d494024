/** The browser the tests and benches drive: Debian's chromium (hack/system-deps.sh installs it), headless. */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Where Debian puts chromium; the tests say it is missing rather than fail on machines without it. */
export const CHROMIUM = '/usr/bin/chromium';
/** Whether this machine has it. */
export const hasChromium = existsSync(CHROMIUM);

/** Starts it as every test and bench does: headless, no sandbox, no GPU, no traffic of its own. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}
