/**
 * The Node.js versions the service supports, checked before anything else runs: first in
 * `npm start` (and in `npm ci` / `npm install`, as the root's preinstall script), and again as the
 * first import of server/src/main.ts. Plain JavaScript with no dependency, so that an old Node.js
 * can run it and say what to do, where it would otherwise fail later with an obscure error, or
 * serve with a runtime nobody tests.
 *
 * npm's own `engine-strict` is not used: it applies to every dependency's `engines` too, and
 * react-router asks for Node.js 22.22+, so it would refuse the 22.17 we support.
 */

/** The oldest supported release; 24 is the active LTS. Keep in step with `engines` in package.json. */
export const REQUIRED_NODE = '22.17.0';

/** Whether `version` ("v22.17.0" or "22.17.0") is at least REQUIRED_NODE. */
export function nodeVersionSupported(version) {
  const have = String(version).replace(/^v/, '').split('.').map(Number);
  const need = REQUIRED_NODE.split('.').map(Number);
  for (let i = 0; i < need.length; i++) {
    if ((have[i] || 0) !== need[i]) return (have[i] || 0) > need[i];
  }
  return true;
}

/** What to tell someone running `command` on Node.js `version`. */
export function unsupportedNodeMessage(version, command) {
  return [
    `This service needs Node.js >= 22.17 (22.17 or later, or 24 LTS); this is Node.js ${version} (${process.execPath}).`,
    'Get a supported Node.js, either:',
    `  - without installing anything, through npm: npx -y -p node@24 -- ${command}`,
    '  - with nvm (https://github.com/nvm-sh/nvm): nvm install 24 && nvm use 24, then again: ' + command,
    '  - or an installer or package from https://nodejs.org/en/download',
  ].join('\n');
}

/** The command being run, for the how-to: npm names it in npm_command for its scripts. */
function commandOf(env) {
  if (env.npm_command === 'ci') return 'npm ci';
  if (env.npm_command === 'install') return 'npm install';
  if (env.npm_command === 'run-script' && env.npm_lifecycle_event) return `npm run ${env.npm_lifecycle_event}`;
  if (env.npm_command === 'start' || env.npm_lifecycle_event === 'start') return 'npm start';
  return 'npm start';
}

if (!nodeVersionSupported(process.versions.node)) {
  process.stderr.write(`\n${unsupportedNodeMessage(process.version, commandOf(process.env))}\n\n`);
  process.exit(1);
}
